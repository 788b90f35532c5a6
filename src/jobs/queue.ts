// What a queue is: its name, its handler and its retry policy. A domain defines its queues with
// `defineQueue` and lists their factories in its manifest (`queues`); src/workers.ts hands them all to
// the runner (./runner.ts), which claims and runs their jobs.
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';

/** A job as its handler sees it. */
export interface JobInfo {
  id: string;
  queue: string;
  /** 1 for the first attempt. A process that died mid-attempt used one up too. */
  attempt: number;
  maxAttempts: number;
  /** Aborted when the runner gives up waiting for the handler at shutdown. */
  signal: AbortSignal;
}

export type JobPayload = Record<string, unknown>;

/** A job of a batch, as the batch handler sees it. */
export interface BatchJob<P extends JobPayload = JobPayload> {
  payload: P;
  job: JobInfo;
}

/**
 * What became of one job of a batch: `done` (deleted), `release` (not attempted: claimable again at once,
 * the attempt not counted), or what a one-job handler would have thrown (RetryJob, FailJob, or any error:
 * the schedule).
 */
export type BatchOutcome = 'done' | 'release' | Error;

export interface QueueDefinition<P extends JobPayload = JobPayload> {
  name: string;
  /**
   * One job at a time (or `batch`, exactly one of the two). Resolving finishes the job (it is deleted).
   * Throwing retries it per `retryDelays`, or see RetryJob/FailJob.
   */
  handler?: (payload: P, job: JobInfo) => Promise<void>;
  /**
   * Jobs claimed and run together: one claim, one handler call holding one slot of `concurrency`, one
   * statement for all the outcomes. `handler` answers one outcome per job, in order; throwing gives every
   * job that error. With `fairness`, a batch holds jobs of one group only and counts as one of the group's
   * `perKey` (so at most `perKey` batches of a group run at once), and a group's due jobs are dealt out
   * over the batches it may still start, so a few jobs run side by side rather than one after another.
   */
  batch?: { size: number; handler: (jobs: BatchJob<P>[], signal: AbortSignal) => Promise<BatchOutcome[]> };
  /** Milliseconds to wait after failed attempt 1, 2, …; the last value repeats. */
  retryDelays?: number[];
  /** Attempts in all, the first included; default retryDelays.length + 1. */
  maxAttempts?: number;
  /** At most this many of the queue's jobs at once in one process; default the runner's concurrency. */
  concurrency?: number;
  /**
   * Fair claims: jobs are grouped by the group they were queued with (the payload field its
   * `fairQueue` name gives, e.g. `webhook_id`); at most `perKey` of a group run at once across every process, and claims
   * take the groups in turns (the oldest job of each group, then the second of each…, a group with fewer
   * jobs running first), so one group's backlog never stands in front of another's job. A claim's work
   * grows with the groups and the jobs it takes, not with the backlog.
   */
  fairness?: { perKey: number };
}

export const DEFAULT_RETRY_DELAYS = [1_000, 10_000, 60_000, 600_000];

/** What a queue's handler may need; it receives the unscoped database and scopes by the job's tenant itself. */
export interface QueueDeps {
  db: Database;
  config: Config;
}

/** A queue as its owner lists it: a factory of its definition, made when the workers start. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- queues of different payloads in one list
export type QueueFactory = (deps: QueueDeps) => QueueDefinition<any>;

/**
 * A fair queue's name with the payload field that groups its jobs. Enqueue and the definition take the
 * same value, so a job is queued with a group exactly when its queue claims by group: a grouped job of
 * a plain queue would never be claimed (plain claims read the jobs without a group).
 */
export interface FairQueueName {
  readonly queue: string;
  readonly groupBy: string;
}

export const fairQueue = (queue: string, groupBy: string): FairQueueName => ({ queue, groupBy });

/** A definition as a domain writes it: a fair queue is named by `fairQueue` and has `fairness`. */
export type QueueSpec<P extends JobPayload = JobPayload> = Omit<QueueDefinition<P>, 'name' | 'fairness'> &
  ({ name: string; fairness?: undefined } | { name: FairQueueName; fairness: { perKey: number } });

export function defineQueue<P extends JobPayload>(spec: QueueSpec<P>): QueueDefinition<P> {
  const name = typeof spec.name === 'string' ? spec.name : spec.name.queue;
  if (typeof spec.name === 'string' ? spec.fairness : !spec.fairness)
    throw new Error(`queue ${name}: a fair queue is named by fairQueue(name, groupBy) and has fairness; a plain one has neither`);
  if (!spec.handler === !spec.batch) throw new Error(`queue ${name}: give exactly one of handler and batch`);
  if (spec.batch && !(Number.isInteger(spec.batch.size) && spec.batch.size >= 1))
    throw new Error(`queue ${name}: batch.size must be a whole number >= 1`);
  return { ...spec, name };
}

/** Thrown by a handler: retry after exactly `delayMs` (e.g. a webhook's Retry-After), attempts permitting. */
export class RetryJob extends Error {
  constructor(
    message: string,
    readonly delayMs: number,
  ) {
    super(message);
    this.name = 'RetryJob';
  }
}

/** Thrown by a handler: the job failed for good (e.g. a webhook answered 410); no more attempts. */
export class FailJob extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FailJob';
  }
}
