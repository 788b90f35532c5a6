// What `npm start` runs once the database is open, before it serves: each domain's start hook (its
// manifest's `onStart`: the accounts bootstrap, the uploads upkeep), in the order of the domains list,
// and the platform's own upkeep (the first run of the idempotency cleanup and, on PGlite, of the vacuum,
// whose queues src/workers.ts runs). Here, above the domains, so that src/main.ts names none.
import type { StartDeps } from './domains/manifest.js';
import { domains } from './domains/index.js';
import { startEmbeddedVacuum } from './jobs/embedded-vacuum.js';
import { IDEMPOTENCY_CLEANUP_QUEUE } from './jobs/idempotency-cleanup.js';
import { startPeriodicRuns } from './jobs/periodic.js';

export async function runStartHooks(deps: StartDeps): Promise<void> {
  for (const domain of domains) await domain.onStart?.(deps);
  void startPeriodicRuns(deps.db.prisma, IDEMPOTENCY_CLEANUP_QUEUE, 'idempotency cleanup');
  startEmbeddedVacuum(deps.db);
}
