// The scheduled cleanup (hourly): a job of the queue `uploads.cleanup` first queues the next run an hour
// later, then removes every organisation's PENDING uploads older than 24 hours. One run is pending at a
// time: scheduling holds a transaction-level advisory lock and queues only when no other run is pending,
// so restarts, several server processes and the rerun of a job after a crash never multiply the chain,
// and a failed cleanup (retried by the runner) does not break it.
import type { PrismaClient } from '../../generated/prisma/client.js';
import { enqueue } from '../../jobs/enqueue.js';
import { defineQueue } from '../../jobs/queue.js';
import type { QueueDeps } from '../../jobs/registry.js';
import { log } from '../../log.js';
import { createDirectoryStorage, type FileStorage } from '../../storage/storage.js';
import { cleanupExpiredUploads, DEFAULT_CLEANUP_HOURS } from './service.js';
import { sweepOrphanFiles } from './sweep.js';

export const CLEANUP_QUEUE = 'uploads.cleanup';
export const CLEANUP_INTERVAL_MS = 60 * 60_000;
const NO_JOB = '00000000-0000-0000-0000-000000000000';

/** Queues a cleanup run in `delayMs` unless one (other than the job `except`) is already pending. */
export function scheduleUploadCleanup(prisma: PrismaClient, { delayMs = 0, except = NO_JOB }: { delayMs?: number; except?: string } = {}): Promise<boolean> {
  return prisma.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${CLEANUP_QUEUE}))`;
    const [{ pending }] = await tx.$queryRaw<{ pending: number }[]>`
      SELECT count(*)::int AS pending FROM jobs WHERE queue = ${CLEANUP_QUEUE} AND failed_at IS NULL AND id <> ${except}::uuid`;
    if (pending > 0) return false;
    await enqueue(tx, CLEANUP_QUEUE, {}, { delayMs });
    return true;
  });
}

export const uploadCleanupQueue = ({ db, config }: QueueDeps) => {
  const storage = createDirectoryStorage(config.storageDir);
  return defineQueue({
    name: CLEANUP_QUEUE,
    concurrency: 1,
    handler: async (_payload, job) => {
      await scheduleUploadCleanup(db.prisma, { delayMs: CLEANUP_INTERVAL_MS, except: job.id });
      const deleted = await cleanupExpiredUploads(db.prisma, storage, DEFAULT_CLEANUP_HOURS);
      if (deleted > 0) log.info('uploads cleanup', { deleted });
    },
  });
};

/**
 * For `main.ts`, at start: sweeps storage (sweep.ts) and makes sure the hourly cleanup is scheduled (its
 * first run right away). Runs in the background; failures are logged, never thrown.
 */
export async function startUploadsUpkeep(prisma: PrismaClient, storage: FileStorage): Promise<void> {
  try {
    log.info('storage sweep done', await sweepOrphanFiles(prisma, storage));
  } catch (error) {
    log.error('storage sweep failed', { error: String((error as Error)?.stack ?? error) });
  }
  await scheduleUploadCleanup(prisma).catch((error) => log.error('could not schedule the uploads cleanup', { error: String(error?.stack ?? error) }));
}
