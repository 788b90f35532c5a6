// One delivery attempt: a signed POST with a deadline, no redirects, and (unless private URLs are allowed)
// a connection only to public addresses, checked on the address actually resolved at connect time so a
// DNS answer that changed since registration cannot reach the internal network. Network failures never
// throw: each becomes a result the caller records and schedules.
//
// Connections are kept alive: an undici Agent holds a pool per origin (scheme, host, port), so a burst to
// one receiver reuses a few sockets instead of opening one per attempt. Two agents, one per guard
// setting: a socket the guarded agent opened was checked when it connected, so reusing it is safe.
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, buildConnector, errors as undiciErrors } from 'undici';
import { signatureHeader } from './signing.js';
import { isPublicAddress } from './url-guard.js';

export const DELIVERY_TIMEOUT_MS = 15_000;
/** Enough of a response body to let the connection be reused; the body itself is not kept. */
const MAX_RESPONSE_BYTES = 4096;
/** Idle sockets to a receiver are kept this long (receivers' own keep-alive is usually 5 s or more). */
const KEEP_ALIVE_MS = 4_000;

export interface DeliveryRequest {
  /** A batch to one hook parses its URL once and passes the URL. */
  url: string | URL;
  /** `webhook-id`: the same for every attempt of one event to one webhook. */
  msgId: string;
  /** `webhook-timestamp`, seconds since the epoch, of this attempt. */
  timestamp: number;
  body: string | Buffer;
  /** Current secret first; the previous one too while its grace window lasts. */
  secrets: readonly string[];
  allowPrivate: boolean;
  timeoutMs?: number;
}

export interface DeliveryResult {
  /** Only a 2xx answer. */
  ok: boolean;
  status?: number;
  /** Why it failed, in Portuguese (recorded in the delivery log). */
  error?: string;
  durationMs: number;
  /** The receiver's Retry-After on 429 or 503. */
  retryAfterMs?: number;
  /** 410 Gone: the receiver asks for the webhook to be disabled. */
  disable?: boolean;
}

class DeliveryTimeout extends Error {}
/** The connect-time guard's refusal: the host is, or resolved to, a non-public address. */
class BlockedAddress extends Error {}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup that fails when any address it answers is not public (net.connect calls it for names). */
function guardedLookup(hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback) {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const blocked = addresses.find((a) => !isPublicAddress(a.address));
    if (blocked) return callback(new BlockedAddress(`${hostname} resolves to ${blocked.address}`), []);
    if ((options as LookupAllOptions).all) return callback(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
}

const connectOptions = { timeout: DELIVERY_TIMEOUT_MS };
const openConnector = buildConnector(connectOptions);
const lookupGuardedConnector = buildConnector({ ...connectOptions, lookup: guardedLookup } as buildConnector.BuildOptions);
/** Literal addresses never reach a resolver, so they are checked here; names by the lookup above. */
const guardedConnector: buildConnector.connector = (options, callback) => {
  const host = options.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) && !isPublicAddress(host)) {
    callback(new BlockedAddress(`${host} is not a public address`), null);
    return;
  }
  lookupGuardedConnector(options, callback);
};

const agentOptions = { keepAliveTimeout: KEEP_ALIVE_MS, keepAliveMaxTimeout: KEEP_ALIVE_MS };
const guardedAgent = new Agent({ ...agentOptions, connect: guardedConnector });
const openAgent = new Agent({ ...agentOptions, connect: openConnector });

/** Retry-After as delta-seconds or an HTTP date, in ms from now; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Every HTTP-date form starts with a day name; Date.parse alone would read "1.5" as a date.
  if (!/^[A-Za-z]{3}/.test(text)) return undefined;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function outcomeOf(status: number, retryAfter: string | string[] | undefined): Omit<DeliveryResult, 'durationMs'> {
  if (status >= 200 && status < 300) return { ok: true, status };
  if (status >= 300 && status < 400) return { ok: false, status, error: `Redirecionamento não seguido (HTTP ${status})` };
  if (status === 410) return { ok: false, status, error: 'O receptor respondeu HTTP 410 (Gone)', disable: true };
  const retryAfterMs =
    status === 429 || status === 503 ? parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter) : undefined;
  return { ok: false, status, error: `O receptor respondeu HTTP ${status}`, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
}

const NETWORK_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'Conexão recusada pelo receptor',
  ECONNRESET: 'Conexão interrompida pelo receptor',
  UND_ERR_SOCKET: 'Conexão interrompida pelo receptor',
  ENOTFOUND: 'Host não encontrado',
  EAI_AGAIN: 'Falha temporária ao resolver o host',
  EHOSTUNREACH: 'Host inalcançável',
  ENETUNREACH: 'Rede inalcançável',
};

function describeFailure(error: Error, timeoutMs: number): string {
  if (error instanceof DeliveryTimeout || error instanceof undiciErrors.ConnectTimeoutError) {
    return `Tempo esgotado: o receptor não respondeu em ${timeoutMs / 1000} s`;
  }
  if (error instanceof BlockedAddress) return 'Conexão bloqueada: o host resolve para um endereço privado, local ou reservado';
  const code = (error as NodeJS.ErrnoException).code;
  if (code && NETWORK_ERRORS[code]) return `${NETWORK_ERRORS[code]} (${code})`;
  if (code?.startsWith('ERR_TLS') || code?.includes('CERT')) return `Falha de TLS (${code})`;
  return `Falha de rede: ${code ?? error.message}`;
}

/** Sends one signed attempt and reports what happened. Rejects only on a programming error (no secret). */
export async function attemptDelivery(delivery: DeliveryRequest): Promise<DeliveryResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const timeoutMs = delivery.timeoutMs ?? DELIVERY_TIMEOUT_MS;

  let url: URL;
  try {
    url = typeof delivery.url === 'string' ? new URL(delivery.url) : delivery.url;
  } catch {
    return { ok: false, error: 'URL inválida', durationMs: elapsed() };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, error: `Esquema não suportado: ${url.protocol}`, durationMs: elapsed() };
  }
  // Sign exactly the bytes that go on the wire.
  const body = typeof delivery.body === 'string' ? Buffer.from(delivery.body, 'utf8') : delivery.body;
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'Funil-Webhooks/1.0',
    'webhook-id': delivery.msgId,
    'webhook-timestamp': String(delivery.timestamp),
    'webhook-signature': signatureHeader(delivery.secrets, delivery.msgId, delivery.timestamp, body),
  };

  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new DeliveryTimeout()), timeoutMs);
  let answered: Omit<DeliveryResult, 'durationMs'> | undefined;
  try {
    const response = await (delivery.allowPrivate ? openAgent : guardedAgent).request({
      origin: url.origin,
      path: url.pathname + url.search,
      method: 'POST',
      headers,
      body,
      signal: deadline.signal,
    });
    // Once the status is known it decides the outcome, whatever happens to the rest of the body.
    answered = outcomeOf(response.statusCode, response.headers['retry-after']);
    // Enough of the answer to let the connection be reused; past MAX_RESPONSE_BYTES it is dropped.
    await response.body.dump({ limit: MAX_RESPONSE_BYTES }).catch(() => {});
    return { ...answered, durationMs: elapsed() };
  } catch (error) {
    if (answered) return { ...answered, durationMs: elapsed() };
    const reason = deadline.signal.aborted ? (deadline.signal.reason as Error) : (error as Error);
    return { ok: false, error: describeFailure(reason, timeoutMs), durationMs: elapsed() };
  } finally {
    clearTimeout(timer);
  }
}
