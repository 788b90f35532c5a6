// Cross-origin access for /graphql and /backend (decisions.md): only the origins in CORS_ORIGINS, with
// the Authorization header allowed and no credentials (keys travel in a header, not in cookies). Unset:
// no cross-origin access at all. The media proxy sets its own `*`.
const ALLOWED_HEADERS = 'authorization, content-type, x-request-id, idempotency-key';
const METHODS = 'GET, POST, PUT, DELETE, OPTIONS';

export function corsPreflight(request: Request, origins: readonly string[]): Response | null {
  if (request.method !== 'OPTIONS' || !request.headers.has('access-control-request-method')) return null;
  const origin = request.headers.get('origin');
  const headers = new Headers({ vary: 'Origin' });
  if (origin && origins.includes(origin)) {
    headers.set('access-control-allow-origin', origin);
    headers.set('access-control-allow-methods', METHODS);
    headers.set('access-control-allow-headers', ALLOWED_HEADERS);
    headers.set('access-control-max-age', '600');
  }
  return new Response(null, { status: 204, headers });
}

export function withCors(request: Request, response: Response, origins: readonly string[]): Response {
  const origin = request.headers.get('origin');
  response.headers.append('vary', 'Origin');
  if (origin && origins.includes(origin)) {
    response.headers.set('access-control-allow-origin', origin);
    response.headers.set('access-control-expose-headers', 'x-request-id, idempotent-replayed, x-next-cursor');
  }
  return response;
}
