// The scheduled cleanup (hourly): a job of the queue `uploads.cleanup` first queues the next run an hour
// later, then removes every organisation's PENDING uploads older than 24 hours (one run pending at a
// time: jobs/periodic.ts).
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { QueueDeps } from '../../jobs/queue.js';
import { definePeriodicQueue, schedulePeriodicRun, startPeriodicRuns } from '../../jobs/periodic.js';
import { log, errorText } from '../../log.js';
import { createStorage } from '../../storage/create.js';
import type { FileStorage } from '../../storage/storage.js';
import { cleanupExpiredUploads, DEFAULT_CLEANUP_HOURS } from './service.js';
import { sweepOrphanFiles } from './sweep.js';

export const CLEANUP_QUEUE = 'uploads.cleanup';
export const CLEANUP_INTERVAL_MS = 60 * 60_000;

/** Queues a cleanup run in `delayMs` unless one (other than the job `except`) is already pending. */
export function scheduleUploadCleanup(prisma: PrismaClient, options: { delayMs?: number; except?: string } = {}): Promise<boolean> {
  return schedulePeriodicRun(prisma, CLEANUP_QUEUE, options);
}

export const uploadCleanupQueue = ({ db, config }: QueueDeps) => {
  const storage = createStorage(config);
  return definePeriodicQueue(db.prisma, CLEANUP_QUEUE, CLEANUP_INTERVAL_MS, async () => {
    const deleted = await cleanupExpiredUploads(db.prisma, storage, DEFAULT_CLEANUP_HOURS);
    if (deleted > 0) log.info('uploads cleanup', { deleted });
  });
};

/**
 * The domain's start hook (its manifest's `onStart`): sweeps storage (sweep.ts) and makes sure the hourly
 * cleanup is scheduled (its first run right away). Runs in the background; failures are logged, never thrown.
 */
export async function startUploadsUpkeep(prisma: PrismaClient, storage: FileStorage): Promise<void> {
  try {
    log.info('storage sweep done', await sweepOrphanFiles(prisma, storage));
  } catch (error) {
    log.error('storage sweep failed', { error: errorText(error) });
  }
  await startPeriodicRuns(prisma, CLEANUP_QUEUE, 'uploads cleanup');
}
