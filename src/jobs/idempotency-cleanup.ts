// The hourly cleanup of Idempotency-Key records past 24 hours (http/idempotency.ts), so the table holds
// at most a day of keys whatever clients send. A record past 24 hours that is still there is ignored
// and overwritten by its key's next use, so a late cleanup changes nothing a client sees.
import { deleteExpiredIdempotencyKeys } from '../http/idempotency.js';
import { log } from '../log.js';
import { definePeriodicQueue } from './periodic.js';
import type { QueueDeps } from './queue.js';

export const IDEMPOTENCY_CLEANUP_QUEUE = 'idempotency.cleanup';
const INTERVAL_MS = 60 * 60_000;

export const idempotencyCleanupQueue = ({ db }: QueueDeps) =>
  definePeriodicQueue(db.prisma, IDEMPOTENCY_CLEANUP_QUEUE, INTERVAL_MS, async () => {
    const deleted = await deleteExpiredIdempotencyKeys(db.prisma);
    if (deleted > 0) log.info('idempotency keys cleanup', { deleted });
  });
