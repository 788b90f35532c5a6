// Projects success bodies and AppErrors into a route's response style (spec "Envelopes", "Errors";
// decisions.md "Error codes the spec leaves open"). Responses are @whatwg-node's, like Yoga's: the Node
// server writes their text to the socket as it is, where a global (undici) Response would be encoded,
// then streamed through a ReadableStream.
import { Response } from '@whatwg-node/server';
import { ERROR_STATUS, RETRY_AFTER_SECONDS, type AppError, type ErrorKind } from '../errors.js';

/**
 * bare: success is the value; errors are {code, message}.
 * envelope: success is {success: true, data: value}; errors are {success: false, error: {code, message}}.
 */
export type ResponseStyle = 'bare' | 'envelope';

/** How a route's success answers are dressed: declared with the route (domains/manifest.ts). */
export interface SuccessShape {
  style: ResponseStyle;
  /** Success status; 204 answers with no body. Default 200. */
  status?: 200 | 201 | 204;
  /**
   * How a success body is dressed in envelope style: 'data' wraps it as {success, data}; 'spread' merges
   * a {data, pagination} result into {success, data, pagination}; 'none' sends it as it is.
   * Default: 'data' for envelope routes, 'none' for bare ones.
   */
  wrap?: 'data' | 'spread' | 'none';
}

const BARE_CODES: Record<ErrorKind, string> = {
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'ERR_FORBIDDEN',
  NOT_FOUND: 'ERR_NOT_FOUND',
  METHOD_NOT_ALLOWED: 'ERR_METHOD_NOT_ALLOWED',
  INVALID_INPUT: 'ERR_INVALID_INPUT',
  CONFLICT: 'ERR_CONFLICT',
  ALREADY_EXISTS: 'ERR_CONFLICT',
  IDEMPOTENCY_KEY_REUSED: 'ERR_IDEMPOTENCY_KEY_REUSED',
  PAYLOAD_TOO_LARGE: 'ERR_PAYLOAD_TOO_LARGE',
  REQUEST_TIMEOUT: 'ERR_REQUEST_TIMEOUT',
  INVALID_PHONE: 'ERR_INVALID_INPUT',
  CHANNEL_ERROR: 'ERR_INTERNAL',
  WINDOW_CLOSED: 'ERR_WINDOW_CLOSED',
  RATE_LIMITED: 'ERR_RATE_LIMITED',
  SERVICE_UNAVAILABLE: 'ERR_SERVICE_UNAVAILABLE',
  INTERNAL: 'ERR_INTERNAL',
};

const ENVELOPE_CODES: Record<ErrorKind, string> = {
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  METHOD_NOT_ALLOWED: 'METHOD_NOT_ALLOWED',
  INVALID_INPUT: 'VALIDATION_ERROR',
  CONFLICT: 'CONFLICT',
  ALREADY_EXISTS: 'ALREADY_EXISTS',
  IDEMPOTENCY_KEY_REUSED: 'IDEMPOTENCY_KEY_REUSED',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
  INVALID_PHONE: 'INVALID_PHONE',
  CHANNEL_ERROR: 'CHANNEL_ERROR',
  WINDOW_CLOSED: 'WINDOW_CLOSED',
  RATE_LIMITED: 'RATE_LIMITED',
  SERVICE_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
  INTERNAL: 'INTERNAL_ERROR',
};

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

/**
 * An error that says when to come back (429, 503: `extra.retry_after`, seconds) says it in `Retry-After`
 * too; a saturated database's 503 always does.
 */
function retryAfter(error: AppError): Record<string, string> {
  const seconds = error.extra.retry_after;
  if (typeof seconds === 'number') return { 'retry-after': String(seconds) };
  return error.kind === 'SERVICE_UNAVAILABLE' ? { 'retry-after': String(RETRY_AFTER_SECONDS) } : {};
}

export function errorResponse(style: ResponseStyle, error: AppError, headers: Record<string, string> = {}): Response {
  // 401 is always the envelope form, whatever the route.
  const envelope = style === 'envelope' || error.kind === 'UNAUTHORIZED';
  const body = envelope
    ? { success: false, error: { code: ENVELOPE_CODES[error.kind], message: error.message, ...error.extra } }
    : { code: BARE_CODES[error.kind], message: error.message, ...error.extra };
  return new Response(JSON.stringify(body), { status: error.status, headers: { ...JSON_HEADERS, ...retryAfter(error), ...headers } });
}

/**
 * An AppError raised before a GraphQL request reaches Yoga (authentication, body limit), in the shape
 * GraphQL clients read: {errors: [{message, extensions: {code, status}}]} with the HTTP status. A 401
 * says how to authenticate, which GraphiQL shows in its result pane.
 */
export function graphqlErrorResponse(error: AppError): Response {
  const message =
    error.kind === 'UNAUTHORIZED' ? `${error.message}. Envie o cabeçalho Authorization: Bearer <chave de API>.` : error.message;
  const body = { errors: [{ message, extensions: { code: error.kind, status: error.status, ...error.extra } }] };
  const headers: Record<string, string> = {
    ...JSON_HEADERS,
    ...retryAfter(error),
    ...(error.kind === 'UNAUTHORIZED' ? { 'www-authenticate': 'Bearer' } : {}),
  };
  return new Response(JSON.stringify(body), { status: error.status, headers });
}

/**
 * Past this many characters an answer's text goes to the socket as bytes. The server adapter writes a
 * string body as it is, and Node encodes a long string written to a socket slowly, on the event loop:
 * 11 ms median (33 at worst) for a 1.7 MB answer on this machine, against 1.4 ms encoded first. A
 * knowledge item's answer carries its content (up to 2M characters): every organisation's requests
 * waited that long, once per upload (docs/benchmarks.md, "Fairness").
 */
const LONG_BODY_CHARS = 64 * 1024;

const textBody = (text: string) => (text.length > LONG_BODY_CHARS ? Buffer.from(text) : text);

/** A JSON answer built elsewhere (Yoga's), its long text as bytes (LONG_BODY_CHARS); streams and short answers as they are. */
export async function longBodyAsBytes(response: Response): Promise<Response> {
  const type = response.headers.get('content-type') ?? '';
  if (Number(response.headers.get('content-length') ?? 0) <= LONG_BODY_CHARS || !type.includes('json')) return response;
  const bytes = Buffer.from(await response.arrayBuffer());
  return new Response(bytes, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** Dresses a success body given as JSON text, without parsing it again. */
export function successResponse(route: SuccessShape, json: string): Response {
  const status = route.status ?? 200;
  if (status === 204) return new Response(null, { status });
  const wrap = route.wrap ?? (route.style === 'envelope' ? 'data' : 'none');
  let body = json || 'null';
  if (wrap === 'data') body = `{"success":true,"data":${body}}`;
  else if (wrap === 'spread') body = body.trim() === '{}' ? '{"success":true}' : `{"success":true,${body.trim().slice(1)}`;
  // A new headers object each time: the Response adds content-length to the one it is given.
  return new Response(textBody(body), { status, headers: { ...JSON_HEADERS } });
}

/** The codes an error answer of this style and status can carry (for the API reference). */
export function errorCodes(style: ResponseStyle, status: number): string[] {
  const kinds = (Object.keys(ERROR_STATUS) as ErrorKind[]).filter((kind) => ERROR_STATUS[kind] === status);
  const codes = style === 'envelope' || status === 401 ? ENVELOPE_CODES : BARE_CODES;
  return [...new Set(kinds.map((kind) => codes[kind]))];
}

/** A handler's answer given as a Response: @whatwg-node's (this module's, the media proxy's) or a global one. */
export function isResponse(value: unknown): value is Response {
  return value instanceof Response || value instanceof globalThis.Response;
}
