// GET /metrics: the Prometheus text, for a caller with `Authorization: Bearer <METRICS_TOKEN>` only.
// Anyone else (no token, a wrong one, metrics not configured) gets the app's ordinary 404 for an unknown
// path, so the endpoint cannot be told apart from a missing one.
import { createHash, timingSafeEqual } from 'node:crypto';
import { metricsText } from './metrics.js';

export const METRICS_PATH = '/metrics';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Constant time whatever the header: digests of equal length are compared, not the strings. */
export function metricsAuthorized(request: Request, token: string | undefined): boolean {
  if (!token || request.method !== 'GET') return false;
  return timingSafeEqual(digest(request.headers.get('authorization') ?? ''), digest(`Bearer ${token}`));
}

export async function metricsResponse(): Promise<Response> {
  const { contentType, body } = await metricsText();
  return new Response(body, { headers: { 'content-type': contentType, 'cache-control': 'no-store' } });
}
