// The queues this server's workers run, and the one call that starts them (src/main.ts).
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import { deliveryQueue, dispatchQueue } from '../domains/webhooks/jobs.js';
import { uploadCleanupQueue } from '../domains/uploads/cleanup-job.js';
import { log } from '../log.js';
import { idempotencyCleanupQueue } from './idempotency-cleanup.js';
import type { QueueDefinition } from './queue.js';
import { runJobs, type JobRunner } from './runner.js';
import { messageDeliveryQueue } from '../domains/messaging/deliver.js';

/** What a queue's handler may need; it receives the unscoped database and scopes by the job's tenant itself. */
export interface QueueDeps {
  db: Database;
  config: Config;
}

/** Every queue, as a factory of its definition. A domain adds its own here. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- queues of different payloads in one list
const QUEUES: Array<(deps: QueueDeps) => QueueDefinition<any>> = [dispatchQueue, deliveryQueue, uploadCleanupQueue, messageDeliveryQueue, idempotencyCleanupQueue];

/** Starts the workers unless WORKERS=false (then `stop` does nothing): the process only serves HTTP. */
export async function startJobRunner(db: Database, config: Config): Promise<JobRunner> {
  if (!config.workers) {
    log.info('workers disabled (WORKERS=false): this process serves HTTP only');
    return { stop: async () => {} };
  }
  return runJobs(db, { queues: QUEUES.map((make) => make({ db, config })), concurrency: config.workerConcurrency });
}
