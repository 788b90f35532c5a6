// `Idempotency-Key` on POSTs, as Stripe does it: the key belongs to the caller (the API key that sent
// it, within its organisation), the request is known by a hash of its method, path and body, the first
// answer is stored and replayed, and a row in the running state locks the key while the first request
// runs. Callers run it after authentication and authorisation, so a replay never answers a caller the
// request's own checks would refuse; 401 and 403 answers are not stored (they say who asked, not what
// happened). A stored answer never holds a secret: API keys and webhook secrets in it are replaced by
// null (`withoutSecrets`), so a replay of a key's creation shows the key's record, not the key.
// The record lives in the database (idempotency_keys), so it holds across processes and restarts.
// The running row carries a lease that its request renews: a process that dies mid-request leaves a
// key that is free again once the lease ends. A 5xx or a thrown error frees the key at once (a retry
// must be able to succeed). Multipart bodies (uploads, media, files) are refused with a key: their
// bytes are streamed to storage, never held whole, so there is no body to hash before running.
import { createHash, randomUUID } from 'node:crypto';
import { Response } from '@whatwg-node/server';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { AppError } from '../errors.js';
import { isMultipartForm } from '../storage/multipart-form.js';
import { readLimitedBody } from './body.js';
import { tenantIs } from '../tenant-sql.js';
import { withoutSecrets } from '../secrets.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const MAX_KEY_LENGTH = 255;
/** How long a record answers for its key. */
export const IDEMPOTENCY_TTL_HOURS = 24;
/** The running row's lease, renewed every third of it while its request runs. */
const LEASE_MS = 30_000;
/** Answer headers a replay repeats (besides the body and status). */
const REPLAYED_HEADERS = ['content-type', 'location', 'x-next-cursor'];

type Claim = { owned: true; lockId: string } | { owned: false; row: StoredRow | undefined };
interface StoredRow {
  request_hash: string;
  status: number | null;
  headers: Record<string, string> | null;
  body: string | null;
}

/** The request's key, or null without one; a malformed key is refused. */
export function idempotencyKeyOf(request: Request): string | null {
  const key = request.headers.get(IDEMPOTENCY_HEADER);
  if (key === null) return null;
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
    throw new AppError('INVALID_INPUT', `O cabeçalho Idempotency-Key deve ter de 1 a ${MAX_KEY_LENGTH} caracteres`, {
      details: [{ field: 'Idempotency-Key', message: `de 1 a ${MAX_KEY_LENGTH} caracteres` }],
    });
  }
  return key;
}

export const multipartKeyRefused = () => new AppError('INVALID_INPUT', 'Idempotency-Key não é aceito em envios multipart (arquivos)');

/** A request's body read whole (JSON bodies are bounded by the 10 MB limit), and the request again. */
export async function bufferedRequest(request: Request): Promise<{ request: Request; bytes: Uint8Array }> {
  const bytes = await readLimitedBody(request);
  const RequestClass = request.constructor as typeof Request;
  return {
    bytes,
    request: new RequestClass(request.url, {
      method: request.method,
      headers: request.headers,
      body: bytes.byteLength ? Buffer.from(bytes) : undefined,
    }),
  };
}

function requestHash(request: Request, bytes: Uint8Array): string {
  const url = new URL(request.url);
  return createHash('sha256')
    .update(`${request.method} ${url.pathname.replace(/\/+$/, '')}${url.search}\n`)
    .update(bytes)
    .digest('base64url');
}

/** Who sent a key: records are apart per API key, within its organisation. */
export interface IdempotencyCaller {
  tenantId: string;
  apiKeyId: string;
}

/**
 * Runs `run` once per (API key, Idempotency-Key): the first request runs and its answer is stored; a
 * retry with the same body gets that answer with `Idempotent-Replayed: true`; another body → 422; a
 * retry while the first runs → 409. `run` must answer errors as responses (they are stored like
 * successes, but for 401, 403 and 5xx, which free the key).
 */
export async function runIdempotent(
  prisma: PrismaClient,
  caller: IdempotencyCaller,
  key: string,
  request: Request,
  run: (request: Request) => Promise<Response>,
): Promise<Response> {
  if (isMultipartForm(request)) throw multipartKeyRefused();
  const buffered = await bufferedRequest(request);
  const hash = requestHash(request, buffered.bytes);
  // A row freed between our insert attempt and our read (its request failed) is claimed again.
  let claim: Claim = { owned: false, row: undefined };
  for (let attempt = 0; attempt < 3 && !claim.owned && !claim.row; attempt++) claim = await claimKey(prisma, caller, key, hash);
  if (!claim.owned) {
    const row = claim.row;
    if (!row) throw new AppError('CONFLICT', 'Uma requisição com esta Idempotency-Key ainda está em andamento');
    if (row.request_hash !== hash) throw new AppError('IDEMPOTENCY_KEY_REUSED', 'Esta Idempotency-Key já foi usada com outra requisição');
    if (row.status === null) throw new AppError('CONFLICT', 'Uma requisição com esta Idempotency-Key ainda está em andamento');
    return new Response(row.status === 204 ? null : row.body, {
      status: row.status,
      headers: { ...row.headers, 'idempotent-replayed': 'true' },
    });
  }
  const { lockId } = claim;
  const record = Prisma.sql`${tenantIs(caller.tenantId)} AND api_key_id = ${caller.apiKeyId}::uuid AND key = ${key} AND lock_id = ${lockId}::uuid`;
  const renewal = setInterval(() => {
    prisma.$executeRaw`UPDATE idempotency_keys SET locked_until = now() + ${LEASE_MS} * interval '1 millisecond' WHERE ${record}`.catch(
      () => {},
    );
  }, LEASE_MS / 3);
  renewal.unref();
  let response: Response;
  try {
    response = await run(buffered.request);
  } catch (error) {
    clearInterval(renewal);
    await release(prisma, record);
    throw error;
  }
  clearInterval(renewal);
  if (response.status >= 500 || response.status === 401 || response.status === 403) {
    await release(prisma, record);
    return response;
  }
  const body = response.status === 204 ? null : await response.text();
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  const stored = body === null ? null : withoutSecrets(body);
  await prisma.$executeRaw`UPDATE idempotency_keys SET status = ${response.status}, headers = ${JSON.stringify(headers)}::jsonb, body = ${stored},
      lock_id = NULL, locked_until = NULL
    WHERE ${record}`;
  return new Response(body, { status: response.status, headers: response.headers });
}

/**
 * Inserts the key in the running state, or takes over a record past 24 hours or a running one whose
 * lease ended; otherwise reads the record that holds the key.
 */
async function claimKey(prisma: PrismaClient, caller: IdempotencyCaller, key: string, hash: string): Promise<Claim> {
  const lockId = randomUUID();
  const claimed = await prisma.$queryRaw<unknown[]>`
    INSERT INTO idempotency_keys (tenant_id, api_key_id, key, request_hash, lock_id, locked_until)
    VALUES (${caller.tenantId}::uuid, ${caller.apiKeyId}::uuid, ${key}, ${hash}, ${lockId}::uuid, now() + ${LEASE_MS} * interval '1 millisecond')
    ON CONFLICT (tenant_id, api_key_id, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, lock_id = EXCLUDED.lock_id,
      locked_until = EXCLUDED.locked_until, status = NULL, headers = NULL, body = NULL, created_at = now()
    WHERE idempotency_keys.created_at < now() - ${IDEMPOTENCY_TTL_HOURS} * interval '1 hour'
       OR (idempotency_keys.status IS NULL AND idempotency_keys.locked_until < now())
    RETURNING 1 AS claimed`;
  if (claimed.length) return { owned: true, lockId };
  const [row] = await prisma.$queryRaw<StoredRow[]>`
    SELECT request_hash, status, headers, body FROM idempotency_keys
    WHERE ${tenantIs(caller.tenantId)} AND api_key_id = ${caller.apiKeyId}::uuid AND key = ${key}`;
  return { owned: false, row };
}

async function release(prisma: PrismaClient, record: Prisma.Sql) {
  await prisma.$executeRaw`DELETE FROM idempotency_keys WHERE ${record}`;
}

/** The hourly cleanup (jobs/idempotency-cleanup.ts): records past 24 hours, in batches. */
export async function deleteExpiredIdempotencyKeys(prisma: PrismaClient, batch = 5_000): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await prisma.$executeRaw`
      DELETE FROM idempotency_keys WHERE (tenant_id, api_key_id, key) IN (
        SELECT tenant_id, api_key_id, key FROM idempotency_keys WHERE created_at < now() - ${IDEMPOTENCY_TTL_HOURS} * interval '1 hour' LIMIT ${batch})`;
    total += deleted;
    if (deleted < batch) return total;
  }
}
