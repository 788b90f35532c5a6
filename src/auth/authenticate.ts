// Turns the Authorization header into a Viewer, or an UNAUTHORIZED AppError. Runs once per request in
// the HTTP layer, before GraphQL or REST, so both transports authenticate identically.
import { timingSafeEqual } from 'node:crypto';
import type { PrismaClient } from '../generated/prisma/client.js';
import { AppError } from '../errors.js';
import { hashApiKey, isWellFormedKey } from './keys.js';
import { effectivePermissions, type RoleName } from './permissions.js';
import type { Viewer } from './viewer.js';
import { tenantIs } from '../tenant-sql.js';

/** last_used_at is a hint for people, not an audit log: write it at most this often per key. */
const LAST_USED_RESOLUTION_MS = 5 * 60 * 1000;

const unauthorized = (message: string) => new AppError('UNAUTHORIZED', message);

interface KeyRow {
  id: string;
  tenant_id: string;
  permissions: string[];
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  user_id: string;
  role: RoleName;
}

export function bearerToken(header: string | null): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : '';
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** One statement on the hot path of every request: the key with its user's role. */
const KEY_SQL = `
  SELECT k.id, k.tenant_id, k.permissions, k.expires_at, k.revoked_at, k.last_used_at, u.id AS user_id, u.role::text AS role
  FROM api_keys k JOIN users u ON u.tenant_id = k.tenant_id AND u.id = k.user_id
  WHERE k.key_hash = $1`;

/**
 * What the key lookup needs of the database's `pg` path (db/direct.ts `DirectSql`, a floor above auth):
 * one statement's rows.
 */
interface KeyLookup {
  query<R>(text: string, values: readonly unknown[]): Promise<R[]>;
}

/** `direct`: the database's `pg` path (PostgreSQL), which reads the key for less CPU than Prisma's. */
export async function authenticate(
  prisma: PrismaClient,
  header: string | null,
  options: { adminToken?: string; now?: Date; direct?: KeyLookup } = {},
): Promise<Viewer> {
  const token = bearerToken(header);
  if (token === null) throw unauthorized('Cabeçalho Authorization ausente');
  if (options.adminToken && token && sameSecret(token, options.adminToken)) return { kind: 'admin' };
  if (!token || !isWellFormedKey(token)) throw unauthorized('Chave de API malformada');
  const hash = hashApiKey(token);
  const [key] = options.direct
    ? await options.direct.query<KeyRow>(KEY_SQL, [hash])
    : await prisma.$queryRawUnsafe<KeyRow[]>(KEY_SQL, hash);
  if (!key) throw unauthorized('Chave de API inválida');
  const now = options.now ?? new Date();
  if (key.revoked_at) throw unauthorized('Chave de API revogada');
  if (key.expires_at && key.expires_at <= now) throw unauthorized('Chave de API expirada');
  if (!key.last_used_at || now.getTime() - key.last_used_at.getTime() > LAST_USED_RESOLUTION_MS) {
    // Decided again in the statement: of many first uses at once only one writes, and a key deleted
    // since the lookup matches nothing (this request was authorised before it went, so it is served).
    await prisma.$executeRaw`
      UPDATE api_keys SET last_used_at = ${now}
      WHERE ${tenantIs(key.tenant_id)} AND id = ${key.id}::uuid AND (last_used_at IS NULL OR last_used_at < ${new Date(now.getTime() - LAST_USED_RESOLUTION_MS)})`;
  }
  return {
    kind: 'user',
    tenantId: key.tenant_id,
    userId: key.user_id,
    role: key.role,
    apiKeyId: key.id,
    permissions: effectivePermissions(key.role, key.permissions),
    narrowed: key.permissions.length > 0,
  };
}
