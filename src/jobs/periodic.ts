// Periodic upkeep as a chain of jobs: each run first queues the next one. One run is pending at a time
// per queue: scheduling holds a transaction-level advisory lock and queues only when no other run is
// pending, so restarts, several server processes and the rerun of a job after a crash never multiply
// the chain, and a failed run (retried by the runner) does not break it.
import type { PrismaClient } from '../generated/prisma/client.js';
import { errorText, log } from '../log.js';
import { enqueue } from './enqueue.js';
import { defineQueue } from './queue.js';

const NO_JOB = '00000000-0000-0000-0000-000000000000';

/** Queues a run of `queue` in `delayMs` unless one (other than the job `except`) is already pending. */
export function schedulePeriodicRun(
  prisma: PrismaClient,
  queue: string,
  { delayMs = 0, except = NO_JOB }: { delayMs?: number; except?: string } = {},
): Promise<boolean> {
  return prisma.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${queue}))`;
    const [{ pending }] = await tx.$queryRaw<{ pending: number }[]>`
      SELECT count(*)::int AS pending FROM jobs WHERE queue = ${queue} AND failed_at IS NULL AND id <> ${except}::uuid`;
    if (pending > 0) return false;
    await enqueue(tx, queue, {}, { delayMs });
    return true;
  });
}

/** A start hook's part: makes sure `queue`'s chain has a run pending (the first right away); a failure is logged, never thrown. */
export function startPeriodicRuns(prisma: PrismaClient, queue: string, what: string): Promise<void> {
  return schedulePeriodicRun(prisma, queue).then(
    () => {},
    (error) => log.error(`could not schedule the ${what}`, { error: errorText(error) }),
  );
}

/** A periodic upkeep's queue: each run first queues the next one `intervalMs` later, then does `run`. */
export function definePeriodicQueue(prisma: PrismaClient, name: string, intervalMs: number, run: () => Promise<void>) {
  return defineQueue({
    name,
    concurrency: 1,
    handler: async (_payload, job) => {
      await schedulePeriodicRun(prisma, name, { delayMs: intervalMs, except: job.id });
      await run();
    },
  });
}
