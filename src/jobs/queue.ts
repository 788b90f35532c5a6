// What a queue is: its name, its handler and its retry policy. A domain defines its queues with
// `defineQueue` and lists them in ./registry.ts; the runner (./runner.ts) claims and runs their jobs.

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

export interface QueueDefinition<P extends JobPayload = JobPayload> {
  name: string;
  /** Resolving finishes the job (it is deleted). Throwing retries it per `retryDelays`, or see RetryJob/FailJob. */
  handler: (payload: P, job: JobInfo) => Promise<void>;
  /** Milliseconds to wait after failed attempt 1, 2, …; the last value repeats. */
  retryDelays?: number[];
  /** Attempts in all, the first included; default retryDelays.length + 1. */
  maxAttempts?: number;
  /** At most this many of the queue's jobs at once in one process; default the runner's concurrency. */
  concurrency?: number;
  /**
   * Fair claims: jobs are grouped by the payload field `key` (e.g. `webhook_id`); at most `perKey` of a
   * group run at once across every process, and claims take the groups in turns (the oldest job of each
   * group, then the second of each…, a group with fewer jobs running first), so one group's backlog
   * never stands in front of another's job.
   */
  fairness?: { key: string; perKey: number };
}

export const DEFAULT_RETRY_DELAYS = [1_000, 10_000, 60_000, 600_000];

export function defineQueue<P extends JobPayload>(queue: QueueDefinition<P>): QueueDefinition<P> {
  return queue;
}

/** Thrown by a handler: retry after exactly `delayMs` (e.g. a webhook's Retry-After), attempts permitting. */
export class RetryJob extends Error {
  constructor(message: string, readonly delayMs: number) {
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
