// What `npm start` runs once the database is open, before it serves: each domain's start hook (its
// manifest's `onStart`: the accounts bootstrap, the uploads upkeep), in the order of the domains list,
// the sealing of stored secrets with the current key (src/reseal-secrets.ts), and the platform's own upkeep (the first run of the idempotency cleanup and, on PGlite, of the vacuum,
// whose queues src/workers.ts runs). Here, above the domains, so that src/main.ts names none.
import type { StartDeps } from './domains/manifest.js';
import { domains } from './domains/index.js';
import { startEmbeddedVacuum } from './jobs/embedded-vacuum.js';
import { IDEMPOTENCY_CLEANUP_QUEUE } from './jobs/idempotency-cleanup.js';
import { startPeriodicRuns } from './jobs/periodic.js';
import { log } from './log.js';
import { resealSecrets } from './reseal-secrets.js';

export async function runStartHooks(deps: StartDeps): Promise<void> {
  for (const domain of domains) await domain.onStart?.(deps);
  // Secrets written before sealing, or sealed with a key SECRETS_KEY now lists second: sealed anew.
  const resealed = await resealSecrets(deps.db.prisma);
  if (resealed.webhooks || resealed.channels) log.info('secrets sealed with the current key', resealed);
  void startPeriodicRuns(deps.db.prisma, IDEMPOTENCY_CLEANUP_QUEUE, 'idempotency cleanup');
  startEmbeddedVacuum(deps.db);
}
