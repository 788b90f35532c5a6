// The workers of this process: the queues it runs (each domain's, from its manifest, and the platform's
// own idempotency cleanup and embedded-database vacuum) and the one call that starts them (src/main.ts).
// Assembled here, above the domains, so that src/jobs/ knows no domain.
import type { Config } from './config.js';
import type { Database } from './db/client.js';
import { domains } from './domains/index.js';
import { embeddedVacuumQueue } from './jobs/embedded-vacuum.js';
import { idempotencyCleanupQueue } from './jobs/idempotency-cleanup.js';
import type { QueueFactory } from './jobs/queue.js';
import { runJobs, type JobRunner } from './jobs/runner.js';
import { log } from './log.js';

/** Every queue, as a factory of its definition: a domain lists its own in its manifest. */
const QUEUES: readonly QueueFactory[] = [...domains.flatMap((d) => d.queues ?? []), idempotencyCleanupQueue, embeddedVacuumQueue];

/** Starts the workers unless WORKERS=false (then `stop` does nothing): the process only serves HTTP. */
export async function startJobRunner(db: Database, config: Config): Promise<JobRunner> {
  if (!config.workers) {
    log.info('workers disabled (WORKERS=false): this process serves HTTP only');
    return { stop: async () => {} };
  }
  return runJobs(db, { queues: QUEUES.map((make) => make({ db, config })), concurrency: config.workerConcurrency });
}
