// One delivery attempt: a signed POST with a deadline, no redirects, and (unless private URLs are allowed)
// a connection only to public addresses, checked on the address actually resolved at connect time so a
// DNS answer that changed since registration cannot reach the internal network. Network failures never
// throw: each becomes a result the caller records and schedules.
import http from 'node:http';
import https from 'node:https';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { signatureHeader } from './signing.js';

export const DELIVERY_TIMEOUT_MS = 15_000;
/** Enough of a response body to let the connection be reused; the body itself is not kept. */
const MAX_RESPONSE_BYTES = 4096;

export interface DeliveryRequest {
  url: string;
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

// Keep-alive pools, one pair per guard setting: a socket the guarded agent opened was checked when it
// connected, so reusing it is safe.
const guardedAgents = { http: new RequestFilteringHttpAgent({ keepAlive: true }), https: new RequestFilteringHttpsAgent({ keepAlive: true }) };
const openAgents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

class DeliveryTimeout extends Error {}

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

function outcomeOf(response: http.IncomingMessage): Omit<DeliveryResult, 'durationMs'> {
  const status = response.statusCode ?? 0;
  if (status >= 200 && status < 300) return { ok: true, status };
  if (status >= 300 && status < 400) return { ok: false, status, error: `Redirecionamento não seguido (HTTP ${status})` };
  if (status === 410) return { ok: false, status, error: 'O receptor respondeu HTTP 410 (Gone)', disable: true };
  const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(response.headers['retry-after']) : undefined;
  return { ok: false, status, error: `O receptor respondeu HTTP ${status}`, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
}

const NETWORK_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'Conexão recusada pelo receptor',
  ECONNRESET: 'Conexão interrompida pelo receptor',
  ENOTFOUND: 'Host não encontrado',
  EAI_AGAIN: 'Falha temporária ao resolver o host',
  EHOSTUNREACH: 'Host inalcançável',
  ENETUNREACH: 'Rede inalcançável',
};

function describeFailure(error: Error, timeoutMs: number): string {
  if (error instanceof DeliveryTimeout) return `Tempo esgotado: o receptor não respondeu em ${timeoutMs / 1000} s`;
  // request-filtering-agent's refusal (plain Error, no code): "DNS lookup <ip>(…) is not allowed. …"
  if (/^DNS lookup .* is not allowed/.test(error.message)) {
    return 'Conexão bloqueada: o host resolve para um endereço privado, local ou reservado';
  }
  const code = (error as NodeJS.ErrnoException).code;
  if (code && NETWORK_ERRORS[code]) return `${NETWORK_ERRORS[code]} (${code})`;
  if (code?.startsWith('ERR_TLS') || code?.includes('CERT')) return `Falha de TLS (${code})`;
  return `Falha de rede: ${code ?? error.message}`;
}

/** Sends one signed attempt and reports what happened. Rejects only on a programming error (no secret). */
export async function attemptDelivery(request: DeliveryRequest): Promise<DeliveryResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const timeoutMs = request.timeoutMs ?? DELIVERY_TIMEOUT_MS;

  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return { ok: false, error: 'URL inválida', durationMs: elapsed() };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, error: `Esquema não suportado: ${url.protocol}`, durationMs: elapsed() };
  }
  const secure = url.protocol === 'https:';
  const agents = request.allowPrivate ? openAgents : guardedAgents;
  // Sign exactly the bytes that go on the wire.
  const body = typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : request.body;
  const headers = {
    'content-type': 'application/json',
    'content-length': String(body.length),
    'user-agent': 'Funil-Webhooks/1.0',
    'webhook-id': request.msgId,
    'webhook-timestamp': String(request.timestamp),
    'webhook-signature': signatureHeader(request.secrets, request.msgId, request.timestamp, body),
  };

  return new Promise((resolve) => {
    let answered: Omit<DeliveryResult, 'durationMs'> | undefined;
    let deadline: NodeJS.Timeout | undefined;
    let settled = false;
    const finish = (result: Omit<DeliveryResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve({ ...result, durationMs: elapsed() });
    };
    let req: http.ClientRequest;
    try {
      req = (secure ? https : http).request(url, { method: 'POST', headers, agent: secure ? agents.https : agents.http });
    } catch (error) {
      // e.g. a header value Node refuses
      finish({ ok: false, error: describeFailure(error as Error, timeoutMs) });
      return;
    }
    deadline = setTimeout(() => req.destroy(new DeliveryTimeout()), timeoutMs);
    // Once the status is known it decides the outcome, whatever happens to the rest of the body.
    req.on('error', (error) => finish(answered ?? { ok: false, error: describeFailure(error, timeoutMs) }));
    req.on('response', (response) => {
      const outcome = outcomeOf(response);
      answered = outcome;
      let received = 0;
      response.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > MAX_RESPONSE_BYTES) {
          finish(outcome);
          response.destroy();
        }
      });
      response.on('end', () => finish(outcome));
      response.on('error', () => finish(outcome));
      response.on('close', () => finish(outcome));
    });
    req.end(body);
  });
}
