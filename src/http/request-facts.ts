// What a request's log line tells beyond method, path and status: who called (organisation and key, or
// the platform operator), what ran (the GraphQL operation name, or the REST route's operationId) and
// the route's template (also the `route` label of the HTTP metrics).
// Filled in while the request is handled, written once by app.ts.
import type { Viewer } from '../auth/viewer.js';
import type { RequestLimits } from './rate-limit.js';

export interface RequestFacts {
  tenantId?: string;
  keyId?: string;
  admin?: true;
  operation?: string;
  /** The route's template (`/backend/leads/:id`, `/graphql`); absent when no route matched. */
  route?: string;
  /** The client's address and rate-limit budget (not logged). */
  limits?: RequestLimits;
}

export function noteViewer(facts: RequestFacts, viewer: Viewer | null): void {
  if (viewer?.kind === 'user') {
    facts.tenantId = viewer.tenantId;
    facts.keyId = viewer.apiKeyId;
  } else if (viewer?.kind === 'admin') facts.admin = true;
}
