// The error answers of the API reference: which statuses a route can answer, and their bodies in the
// route's style with the codes http/responses.ts sends (401 is always the envelope form).
import type { JsonSchema, RouteSpec } from '../../domains/manifest.js';
import type { ResponseStyle } from '../../http/responses.js';
import { errorCodes } from '../../http/responses.js';

const MEANING: Record<number, string> = {
  400: 'Invalid input: a body, query or path value the route refuses; or an answer that would pass 10 MB of JSON (`max_bytes` says the limit): ask for fewer items.',
  401: 'Missing, malformed, unknown, revoked or expired API key.',
  403: 'The key’s role or permissions do not allow this, or the key is not an organisation’s.',
  404: 'Unknown id, or an id of another organisation.',
  409: 'Conflicts with the current state (a duplicate, or a record still in use), or a request with the same `Idempotency-Key` is still running.',
  422: 'The `Idempotency-Key` was already used with another request (method, path or body) in the last 24 hours; or, for a free-text or media send on a WhatsApp Cloud channel, the 24-hour customer-service window is closed (`WINDOW_CLOSED`: send a template).',
  408: 'The body did not arrive whole within REQUEST_BODY_TIMEOUT_MS (30 s) of its headers; the connection is closed.',
  413: 'Body over 10 MB (plus multipart overhead), refused before it is read.',
  429: 'Over the rate limit: requests a minute per API key (RATE_LIMIT_PER_MINUTE), or failed authentications a minute per client address (30). `Retry-After` says when to come back; every answer carries `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`.',
  500: 'Internal error; the details stay in the server log.',
  502: 'The provider behind the route failed.',
  503: 'The server is busy or a service it needs is away: the database is saturated (no connection or transaction slot in time, or a statement cut by its timeout) or cannot be reached (down, restarting, the connection lost), or every knowledge extraction slot was taken for over 30 s, or the file storage (STORAGE=s3: the bucket) cannot be reached. Retry after the `Retry-After` seconds.',
};

const PLATFORM_404 = 'Without the admin token (ADMIN_TOKEN) the platform area does not exist: every answer is 404.';

/** What a route's declaration and arguments say it can refuse. */
export interface RouteFacts {
  /** It reads any input: path, query or body. */
  takesInput: boolean;
  /** It names records: path parameters or ids in its input. */
  namesRecords: boolean;
  /** It honours `Idempotency-Key` (default: takesIdempotencyKey; not when it takes multipart bodies only). */
  idempotent?: boolean;
}

export function errorStatuses(route: RouteSpec, facts: RouteFacts): number[] {
  const statuses = new Set<number>([500, 503, ...(route.openapi?.errors ?? [])]);
  const writes = route.method === 'POST' || route.method === 'PUT';
  // A field's answer with a body may be refused for passing 10 MB of JSON (http/graphql-size.ts).
  if (facts.takesInput || writes || (route.field && route.status !== 204)) statuses.add(400);
  if (writes) {
    statuses.add(408);
    statuses.add(413);
  }
  if (route.access === 'platform') statuses.add(404);
  else if (route.access !== 'public') {
    statuses.add(401);
    statuses.add(403);
  }
  // A key over its budget, or an address past its failed authentications.
  if (route.access !== 'public') statuses.add(429);
  if (facts.namesRecords) statuses.add(404);
  // Any write can meet a database constraint (a duplicate, a record still referenced).
  if (route.field && route.method !== 'GET') statuses.add(409);
  if (facts.idempotent ?? takesIdempotencyKey(route)) {
    statuses.add(409);
    statuses.add(422);
  }
  return [...statuses].sort((a, b) => a - b);
}

/** An organisation's POST honours `Idempotency-Key` (http/idempotency.ts). */
export function takesIdempotencyKey(route: RouteSpec): boolean {
  return route.method === 'POST' && route.access !== 'public' && route.access !== 'platform';
}

const DETAILS = {
  type: 'array',
  description:
    'The fields that were wrong, when the error names them: `field` is a JSON path of the body, query or path (`products[2].qty`).',
  items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } }, required: ['field', 'message'] },
};

export function errorBody(style: ResponseStyle, status: number): JsonSchema {
  const codes = errorCodes(style, status);
  const error = {
    type: 'object',
    properties: {
      code: { type: 'string', enum: codes },
      message: { type: 'string', description: 'In Portuguese; match on `code`.' },
      ...(status === 400 ? { details: DETAILS } : {}),
    },
    required: ['code', 'message'],
    description: 'Some errors carry more fields next to code and message (e.g. `pipeline_count`).',
  };
  if (style === 'bare' && status !== 401) return error;
  return {
    type: 'object',
    properties: { success: { const: false }, error },
    required: ['success', 'error'],
  };
}

/** The name of the shared response component for an error of this style and status. */
export const errorResponseName = (style: ResponseStyle, status: number, platform: boolean) =>
  status === 401
    ? 'Unauthorized'
    : `${style === 'bare' ? 'Bare' : 'Envelope'}Error${status}${platform && status === 404 ? 'Platform' : ''}`;

/** What the server says, for the examples (messages are in Portuguese). */
const EXAMPLE_MESSAGE: Record<number, string> = {
  400: 'Entrada inválida: name é obrigatório',
  401: 'Chave de API ausente ou inválida',
  403: 'Permissão insuficiente',
  404: 'Registro não encontrado',
  408: 'O corpo da requisição não chegou a tempo',
  409: 'Conflito com o estado atual',
  413: 'Corpo maior que 10 MB',
  422: 'Idempotency-Key já usada com outra requisição',
  429: 'Limite de requisições excedido',
  500: 'Erro interno',
  502: 'O provedor falhou',
  503: 'Servidor ocupado; tente de novo em instantes',
};

function errorExample(style: ResponseStyle, status: number): Record<string, unknown> {
  const error = {
    code: errorCodes(style, status)[0],
    message: EXAMPLE_MESSAGE[status] ?? 'Erro',
    ...(status === 400 ? { details: [{ field: 'name', message: 'é obrigatório' }] } : {}),
  };
  return style === 'bare' && status !== 401 ? error : { success: false, error };
}

export function errorResponse(style: ResponseStyle, status: number, platform: boolean) {
  return {
    description: platform && status === 404 ? PLATFORM_404 : (MEANING[status] ?? 'Error.'),
    content: { 'application/json': { schema: errorBody(style, status), example: errorExample(style, status) } },
  };
}
