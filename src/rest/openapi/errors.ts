// The error answers of the API reference: which statuses a route can answer, and their bodies in the
// route's style with the codes http/responses.ts sends (401 is always the envelope form).
import type { JsonSchema, ResponseStyle, RouteSpec } from '../../domains/manifest.js';
import { errorCodes } from '../../http/responses.js';

const MEANING: Record<number, string> = {
  400: 'Invalid input: a body, query or path value the route refuses.',
  401: 'Missing, malformed, unknown, revoked or expired API key.',
  403: 'The key’s role or permissions do not allow this, or the key is not an organisation’s.',
  404: 'Unknown id, or an id of another organisation.',
  409: 'Conflicts with the current state (a duplicate, or a record still in use).',
  408: 'The body did not arrive whole within REQUEST_BODY_TIMEOUT_MS (30 s) of its headers; the connection is closed.',
  413: 'Body over 10 MB (plus multipart overhead), refused before it is read.',
  500: 'Internal error; the details stay in the server log.',
  502: 'The provider behind the route failed.',
  503: 'The database is saturated (no connection or transaction slot in time, or a statement cut by its timeout): retry after the `Retry-After` seconds.',
};

const PLATFORM_404 = 'Without the admin token (ADMIN_TOKEN) the platform area does not exist: every answer is 404.';

/** What a route's declaration and arguments say it can refuse. */
export interface RouteFacts {
  /** It reads any input: path, query or body. */
  takesInput: boolean;
  /** It names records: path parameters or ids in its input. */
  namesRecords: boolean;
}

export function errorStatuses(route: RouteSpec, facts: RouteFacts): number[] {
  const statuses = new Set<number>([500, 503, ...(route.openapi?.errors ?? [])]);
  const writes = route.method === 'POST' || route.method === 'PUT';
  if (facts.takesInput || writes) statuses.add(400);
  if (writes) {
    statuses.add(408);
    statuses.add(413);
  }
  if (route.access === 'platform') statuses.add(404);
  else if (route.access !== 'public') {
    statuses.add(401);
    statuses.add(403);
  }
  if (facts.namesRecords) statuses.add(404);
  // Any write can meet a database constraint (a duplicate, a record still referenced).
  if (route.field && route.method !== 'GET') statuses.add(409);
  return [...statuses].sort((a, b) => a - b);
}

export function errorBody(style: ResponseStyle, status: number): JsonSchema {
  const codes = errorCodes(style, status);
  const error = {
    type: 'object',
    properties: { code: { type: 'string', enum: codes }, message: { type: 'string', description: 'In Portuguese; match on `code`.' } },
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
  status === 401 ? 'Unauthorized' : `${style === 'bare' ? 'Bare' : 'Envelope'}Error${status}${platform && status === 404 ? 'Platform' : ''}`;

export function errorResponse(style: ResponseStyle, status: number, platform: boolean) {
  return {
    description: platform && status === 404 ? PLATFORM_404 : (MEANING[status] ?? 'Error.'),
    content: { 'application/json': { schema: errorBody(style, status) } },
  };
}
