// Projects success bodies and AppErrors into a route's response style (spec "Envelopes", "Errors";
// decisions.md "Error codes the spec leaves open").
import type { AppError, ErrorKind } from '../errors.js';
import type { ResponseStyle, RouteSpec } from '../domains/manifest.js';

const BARE_CODES: Record<ErrorKind, string> = {
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'ERR_FORBIDDEN',
  NOT_FOUND: 'ERR_NOT_FOUND',
  INVALID_INPUT: 'ERR_INVALID_INPUT',
  CONFLICT: 'ERR_CONFLICT',
  ALREADY_EXISTS: 'ERR_CONFLICT',
  PAYLOAD_TOO_LARGE: 'ERR_PAYLOAD_TOO_LARGE',
  REQUEST_TIMEOUT: 'ERR_REQUEST_TIMEOUT',
  INVALID_PHONE: 'ERR_INVALID_INPUT',
  CHANNEL_ERROR: 'ERR_INTERNAL',
  INTERNAL: 'ERR_INTERNAL',
};

const ENVELOPE_CODES: Record<ErrorKind, string> = {
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  INVALID_INPUT: 'VALIDATION_ERROR',
  CONFLICT: 'CONFLICT',
  ALREADY_EXISTS: 'ALREADY_EXISTS',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
  INVALID_PHONE: 'INVALID_PHONE',
  CHANNEL_ERROR: 'CHANNEL_ERROR',
  INTERNAL: 'INTERNAL_ERROR',
};

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

export function errorResponse(style: ResponseStyle, error: AppError, headers: Record<string, string> = {}): Response {
  // 401 is always the envelope form, whatever the route.
  const envelope = style === 'envelope' || error.kind === 'UNAUTHORIZED';
  const body = envelope
    ? { success: false, error: { code: ENVELOPE_CODES[error.kind], message: error.message, ...error.extra } }
    : { code: BARE_CODES[error.kind], message: error.message, ...error.extra };
  return new Response(JSON.stringify(body), { status: error.status, headers: { ...JSON_HEADERS, ...headers } });
}

/** Dresses a success body given as JSON text, without parsing it again. */
export function successResponse(route: RouteSpec, json: string): Response {
  const status = route.status ?? 200;
  if (status === 204) return new Response(null, { status });
  const wrap = route.wrap ?? (route.style === 'envelope' ? 'data' : 'none');
  let body = json || 'null';
  if (wrap === 'data') body = `{"success":true,"data":${body}}`;
  else if (wrap === 'spread') body = body.trim() === '{}' ? '{"success":true}' : `{"success":true,${body.trim().slice(1)}`;
  return new Response(body, { status, headers: JSON_HEADERS });
}
