// What a request's log line tells beyond method, path and status: who called (organisation and key, or
// the platform operator) and what ran (the GraphQL operation name, or the REST route's operationId).
// Filled in while the request is handled, written once by app.ts.
import type { Viewer } from '../auth/viewer.js';
import type { RequestLimits } from './rate-limit.js';

export interface RequestFacts {
  tenantId?: string;
  keyId?: string;
  admin?: true;
  operation?: string;
  /** The client's address and rate-limit budget (not logged). */
  limits?: RequestLimits;
}

export function noteViewer(facts: RequestFacts, viewer: Viewer | null): void {
  if (viewer?.kind === 'user') {
    facts.tenantId = viewer.tenantId;
    facts.keyId = viewer.apiKeyId;
  } else if (viewer?.kind === 'admin') facts.admin = true;
}
