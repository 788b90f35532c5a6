// The job runner: claims due jobs of its queues with a lease, runs up to `concurrency` handlers at once,
// and records each outcome (deleted when done, rescheduled for a retry, or marked failed). Several
// runners, in one process or in many on one PostgreSQL, never hold the same attempt: a claim takes rows
// with FOR UPDATE SKIP LOCKED and sets a lease that a heartbeat renews while the handler runs. When a
// process dies, its leases run out and the jobs become claimable again (the next attempt).
//
// It sleeps until something can be due: a NOTIFY from an enqueue that committed, a handler finishing,
// the next run_at or lease expiry it knows of, or else the fallback poll (a missed notification, a
// job retried by another process).
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Database } from '../db/client.js';
import { log } from '../log.js';
import { observeJob } from '../observability/metrics.js';
import { traced } from '../observability/tracing.js';
import { JOBS_CHANNEL } from './enqueue.js';
import { DEFAULT_RETRY_DELAYS, FailJob, RetryJob, type BatchOutcome, type JobPayload, type QueueDefinition } from './queue.js';

export interface JobRunnerOptions {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- queues of different payloads in one list
  queues: QueueDefinition<any>[];
  /** Handlers running at once in this runner, all queues together. */
  concurrency?: number;
  /** How long a claim holds a job without a heartbeat; a dead process's jobs wait this long. */
  leaseMs?: number;
  /** Fallback poll when no notification arrives. */
  pollMs?: number;
}

export interface JobRunner {
  /**
   * Stops claiming and waits up to `timeoutMs` for the running handlers. Handlers still running then
   * are aborted (their signal) and keep their lease: another process runs their job after it expires.
   */
  stop(options?: { timeoutMs?: number }): Promise<void>;
}

export async function runJobs(db: Pick<Database, 'sql' | 'listen'>, options: JobRunnerOptions): Promise<JobRunner> {
  const runner = new Runner(db, options);
  await runner.start();
  return runner;
}

interface Queue {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- queues of different payloads in one list
  definition: QueueDefinition<any>;
  retryDelays: number[];
  maxAttempts: number;
  limit: number;
  running: number;
}

interface ClaimedJob {
  id: string;
  payload: JobPayload;
  attempts: number;
  /** The lease's holder (locked_by): this runner's id, or for a batch its own token. */
  token: string;
}

/** A handler under way: one job, or one batch (one slot either way). */
interface Running {
  done: Promise<void>;
  controller: AbortController;
  jobs: ClaimedJob[];
}

/** A due job may be held by a claim of another runner for an instant: look again shortly, not in a loop. */
const MIN_SLEEP_MS = 20;

// The jobs table is a queue: autovacuum analyses it whenever it churns, often when it is empty, and the
// planner then believes it holds one row whatever it holds. So no statement here reaches jobs through a
// join or IN (subquery) alone: with such statistics those became nested loops over the whole queue (90 ms
// for a plain claim, 4.7 s for a fair batch claim at 2,000 due jobs), and an IN (... LIMIT ... SKIP LOCKED)
// re-run per row claimed more than its LIMIT. Rows are reached by id = ANY(ARRAY(...)) (evaluated once,
// the primary key's only use; the outcome and renewal statements name their ids as id = ANY($1) beside
// their join), the groups' running counts are one jsonb object looked up per job, and
// the conditions re-checked on a row another claim just took are wrapped in IS TRUE so that no index
// on them competes with the primary key (test/jobs/queue-statistics.test.ts). For the same reason due
// jobs have one index, jobs_due_idx (queue, group_key, run_at, id) where not failed: beside another
// index on queue, both believed to hold one row, the planner took the other and read the whole queue.
const CLAIMABLE = (alias: string) =>
  `(${alias}.failed_at IS NULL AND ${alias}.run_at <= now() AND (${alias}.locked_until IS NULL OR ${alias}.locked_until <= now())) IS TRUE`;

// A plain queue's jobs have no group (group_key ''): jobs_due_idx gives them in run_at order.
const CLAIM = `
  UPDATE jobs SET attempts = attempts + 1, locked_by = $1, locked_until = now() + $2::float8 * interval '1 millisecond'
  WHERE id = ANY(ARRAY(
    SELECT id FROM jobs
    WHERE queue = $3 AND group_key = '' AND failed_at IS NULL AND run_at <= now() AND (locked_until IS NULL OR locked_until <= now())
    ORDER BY run_at
    LIMIT $4
    FOR UPDATE SKIP LOCKED))
  RETURNING id::text AS id, payload, attempts, locked_by AS token`;

// Which of the queues $1 have a job claimable now: per queue, an index probe that stops at the first.
const CLAIMABLE_QUEUES = `
  SELECT q AS queue FROM unnest($1::text[]) AS q
  WHERE EXISTS (
    SELECT 1 FROM jobs
    WHERE queue = q AND failed_at IS NULL AND run_at <= now() AND (locked_until IS NULL OR locked_until <= now()))`;

// The groups (group_key) of queue `queue` that have unfailed jobs, found by a skip scan of jobs_due_idx:
// one index probe per group for the next key after the last, so a group's backlog is never read to
// know it exists. `running`: per group, what runs now (current leases of every process, counted by
// `counted`), one jsonb object, read from the leased rows alone (jobs_leased_idx). `busy`: each group
// with its running count.
const fairGroups = (counted: string, queue: string) => `
  groups(k) AS (
    (SELECT group_key FROM jobs WHERE queue = ${queue} AND failed_at IS NULL ORDER BY group_key LIMIT 1)
    UNION ALL
    SELECT (SELECT group_key FROM jobs WHERE queue = ${queue} AND failed_at IS NULL AND group_key > g.k ORDER BY group_key LIMIT 1)
    FROM groups g WHERE g.k IS NOT NULL),
  running AS MATERIALIZED (
    SELECT COALESCE(jsonb_object_agg(k, n), '{}') AS n FROM (
      SELECT group_key AS k, ${counted} AS n FROM jobs
      WHERE queue = ${queue} AND locked_until IS NOT NULL AND failed_at IS NULL AND locked_until > now()
      GROUP BY 1) AS held),
  busy AS MATERIALIZED (
    SELECT g.k, COALESCE((r.n->>g.k)::int, 0) AS busy FROM groups g CROSS JOIN running r WHERE g.k IS NOT NULL)`;

/**
 * The claimable jobs of queue $3 that a claim may take, per group: its `take` oldest (an expression of
 * the group's `busy`), read from the index in order, with the group's busy and each job's turn in it.
 * The work is per group and per job taken, whatever the backlog.
 */
const dueByGroup = (counted: string, take: string) => `
  ${fairGroups(counted, '$3')},
  due AS (
    SELECT j.id, j.run_at, b.k, b.busy, j.turn FROM busy b
    CROSS JOIN LATERAL (
      SELECT id, run_at, row_number() OVER (ORDER BY run_at, id) AS turn FROM (
        SELECT id, run_at FROM jobs
        WHERE queue = $3 AND group_key = b.k AND failed_at IS NULL AND run_at <= now() AND (locked_until IS NULL OR locked_until <= now())
        ORDER BY run_at, id
        LIMIT ${take}) AS oldest) AS j)`;

// The fair claim: per group, only the oldest jobs that fit beside the group's running ones ($5 at most,
// leases of every process counted); then the groups in turns, those with fewer jobs running first (a
// job's place: the group's running jobs plus its rank). Concurrent claims cannot pass the cap: they
// choose from the same oldest jobs of a group, SKIP LOCKED leaves one claim each row, and a claim that
// reads a row another just took re-checks its lease (READ COMMITTED re-evaluates a locked row's
// conditions on its newest version) and leaves it. The allowed jobs are locked in their order (pos,
// looked up in a jsonb object built once) until $4 are held.
const FAIR_CLAIM = `
  WITH RECURSIVE ${dueByGroup('count(*)', 'GREATEST($5 - b.busy, 0)')},
  allowed AS MATERIALIZED (
    SELECT id, row_number() OVER (ORDER BY turn + busy, run_at, id) AS pos FROM due WHERE turn + busy <= $5)
  UPDATE jobs SET attempts = attempts + 1, locked_by = $1, locked_until = now() + $2::float8 * interval '1 millisecond'
  WHERE id = ANY(ARRAY(
    SELECT l.id FROM jobs l
    WHERE l.id = ANY(ARRAY(SELECT id FROM allowed)) AND ${CLAIMABLE('l')}
    ORDER BY ((SELECT jsonb_object_agg(id, pos) FROM allowed) ->> l.id::text)::bigint
    LIMIT $4
    FOR UPDATE SKIP LOCKED))
  RETURNING id::text AS id, payload, attempts, locked_by AS token`;

// The fair claim of batches: what runs of a group is counted in batches (distinct lease holders: each
// batch has its own token), at most $5 of them. A group's due jobs, oldest first, are dealt out in turns
// over the batches it may still start (job n to batch n mod free), at most $6 per batch; batches are
// taken as the jobs are above (fewer running first, then the oldest), $4 at most. Each gets the token
// $1:<its rank>. Concurrent claims deal the same oldest rows, so together they start at most the free
// batches of a group, whichever rows each one locks.
const FAIR_BATCH_CLAIM = `
  WITH RECURSIVE ${dueByGroup('count(DISTINCT locked_by)', 'GREATEST($5 - b.busy, 0) * $6')},
  dealt AS (
    SELECT id, k, run_at, busy + (turn - 1) % ($5 - busy) AS place FROM due
    WHERE busy < $5 AND turn - 1 < ($5 - busy) * $6),
  picked AS MATERIALIZED (
    SELECT id, rank FROM (
      SELECT id, dense_rank() OVER (ORDER BY place, first_run, k) AS rank
      FROM (SELECT id, k, place, min(run_at) OVER (PARTITION BY k, place) AS first_run FROM dealt) AS batch) AS ranked
    WHERE rank <= $4),
  locked AS MATERIALIZED (
    SELECT l.id FROM jobs l WHERE l.id = ANY(ARRAY(SELECT id FROM picked)) AND ${CLAIMABLE('l')}
    FOR UPDATE SKIP LOCKED)
  UPDATE jobs j SET attempts = j.attempts + 1, locked_until = now() + $2::float8 * interval '1 millisecond',
    locked_by = $1::text || ':' || ((SELECT jsonb_object_agg(id, rank) FROM picked) ->> j.id::text)
  WHERE j.id = ANY(ARRAY(SELECT id FROM locked))
  RETURNING j.id::text AS id, j.payload, j.attempts, j.locked_by AS token`;

// When the next job of a fair queue ($1) can be claimed, leaving out groups already at their cap ($2;
// one of their jobs finishing wakes the runner that ran it) and this runner's own jobs ($3): the oldest
// unleased job of each group under its cap, or the end of another runner's lease. Per group, like the claims.
const fairNextDue = (counted: string) => `
  WITH RECURSIVE ${fairGroups(counted, '$1')}
  SELECT (EXTRACT(EPOCH FROM LEAST(
    (SELECT min(f.run_at) FROM busy b CROSS JOIN LATERAL (
      SELECT run_at FROM jobs
      WHERE queue = $1 AND group_key = b.k AND failed_at IS NULL AND (locked_until IS NULL OR locked_until <= now())
        AND (locked_by IS NULL OR NOT starts_with(locked_by, $3))
      ORDER BY run_at LIMIT 1) AS f
     WHERE b.busy < $2),
    (SELECT min(locked_until) FROM jobs
     WHERE queue = $1 AND locked_until IS NOT NULL AND failed_at IS NULL AND locked_until > now() AND NOT starts_with(locked_by, $3))
  ) - now()) * 1000)::float8 AS ms`;

const FAIR_NEXT_DUE = fairNextDue('count(*)');
const FAIR_BATCH_NEXT_DUE = fairNextDue('count(DISTINCT locked_by)');

// When the next job of these queues can be claimed: its run_at, or the end of another runner's lease.
const NEXT_DUE = `
  SELECT (EXTRACT(EPOCH FROM min(GREATEST(run_at, COALESCE(locked_until, run_at))) - now()) * 1000)::float8 AS ms
  FROM jobs
  WHERE queue = ANY($1::text[]) AND failed_at IS NULL AND (locked_by IS NULL OR NOT starts_with(locked_by, $2))`;

const RENEW = `
  UPDATE jobs SET locked_until = now() + $3::float8 * interval '1 millisecond'
  FROM unnest($1::uuid[], $2::text[]) AS held(id, token)
  WHERE jobs.id = ANY($1::uuid[]) AND jobs.id = held.id AND jobs.locked_by = held.token`;

// Outcomes apply only while this runner still holds this attempt.
const DONE = `DELETE FROM jobs WHERE id = $1 AND locked_by = $2 AND attempts = $3`;
const RETRY = `
  UPDATE jobs SET run_at = now() + $4::float8 * interval '1 millisecond', locked_by = NULL, locked_until = NULL, last_error = $5
  WHERE id = $1 AND locked_by = $2 AND attempts = $3`;
const FAILED = `
  UPDATE jobs SET failed_at = now(), attempts = $4, locked_by = NULL, locked_until = NULL, last_error = $5
  WHERE id = $1 AND locked_by = $2 AND attempts = $3`;
// A batch whose jobs all succeeded, the common case. Its token names this claim alone (a job claimed
// again holds another), so it needs no attempts check.
const BATCH_DONE = `DELETE FROM jobs WHERE id = ANY($1::uuid[]) AND locked_by = $2`;
// A batch's outcomes in one statement: kind done | retry | failed | release per job ($1..$6), under its
// token ($7). A released job was not attempted: its claim's attempt is given back.
const OUTCOMES = `
  WITH o AS (
    SELECT * FROM unnest($1::uuid[], $2::int[], $3::text[], $4::float8[], $5::text[], $6::int[]) AS o(id, attempts, kind, delay_ms, error, final_attempts)),
  gone AS (
    DELETE FROM jobs j USING o
    WHERE j.id = ANY($1::uuid[]) AND o.kind = 'done' AND j.id = o.id AND j.locked_by = $7 AND j.attempts = o.attempts
    RETURNING j.id),
  kept AS (
    UPDATE jobs j SET
      run_at = CASE WHEN o.kind = 'retry' THEN now() + o.delay_ms * interval '1 millisecond' ELSE j.run_at END,
      failed_at = CASE WHEN o.kind = 'failed' THEN now() END,
      attempts = CASE o.kind WHEN 'release' THEN j.attempts - 1 WHEN 'failed' THEN o.final_attempts ELSE j.attempts END,
      last_error = CASE WHEN o.kind = 'release' THEN j.last_error ELSE o.error END,
      locked_by = NULL, locked_until = NULL
    FROM o
    WHERE j.id = ANY($1::uuid[]) AND o.kind <> 'done' AND j.id = o.id AND j.locked_by = $7 AND j.attempts = o.attempts
    RETURNING j.id)
  SELECT (SELECT count(*) FROM gone) + (SELECT count(*) FROM kept) AS n`;

interface Outcome {
  kind: 'done' | 'retry' | 'failed' | 'release';
  delayMs?: number;
  error?: string;
  finalAttempts?: number;
}

class Runner implements JobRunner {
  private readonly id = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly queues: Queue[];
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly running = new Map<string, Running>();
  private claims = 0; // numbers the batch claims, whose tokens must differ
  private first = 0; // queue claimed first in the next pass, rotated so no queue always goes last
  private timer?: NodeJS.Timeout;
  private heartbeat?: NodeJS.Timeout;
  private unlisten?: () => Promise<void>;
  private pass?: Promise<void>;
  private again = false;
  /** Ends the wait for the next-due answer when the runner is woken meanwhile. */
  private onWake?: () => void;
  /** Queues with a handler finished since the last pass: likely to have more work. */
  private finished = new Set<Queue>();
  private stopping?: Promise<void>;

  constructor(
    private readonly db: Pick<Database, 'sql' | 'listen'>,
    options: JobRunnerOptions,
  ) {
    this.concurrency = options.concurrency ?? 10;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.pollMs = options.pollMs ?? 5_000;
    this.queues = options.queues.map((definition) => {
      const retryDelays = definition.retryDelays?.length ? definition.retryDelays : DEFAULT_RETRY_DELAYS;
      return {
        definition,
        retryDelays,
        maxAttempts: definition.maxAttempts ?? retryDelays.length + 1,
        limit: definition.concurrency ?? this.concurrency,
        running: 0,
      };
    });
  }

  async start() {
    this.unlisten = await this.db.listen(JOBS_CHANNEL, this.wake);
    this.heartbeat = setInterval(() => void this.renewLeases(), this.leaseMs / 3);
    this.wake();
  }

  stop({ timeoutMs = 10_000 } = {}): Promise<void> {
    this.stopping ??= this.drain(timeoutMs);
    return this.stopping;
  }

  private async drain(timeoutMs: number) {
    clearTimeout(this.timer);
    await this.unlisten?.().catch((e) => log.warn('job runner: unlisten failed', { error: String(e) }));
    await this.pass; // a claim under way completes; its jobs are waited for below
    let timeout: NodeJS.Timeout | undefined;
    const drained = await Promise.race([
      Promise.allSettled([...this.running.values()].map((r) => r.done)).then(() => true),
      new Promise<false>((resolve) => (timeout = setTimeout(resolve, timeoutMs, false))),
    ]);
    clearTimeout(timeout);
    clearInterval(this.heartbeat);
    if (!drained) {
      log.warn('job runner stopped with handlers still running; their jobs run again when the lease expires', {
        jobs: [...this.running.keys()],
      });
      for (const r of this.running.values()) r.controller.abort();
    }
  }

  /** Runs a claim pass now, or once more after the one under way. */
  private wake = () => {
    if (this.stopping) return;
    this.again = true;
    this.onWake?.();
    // passes() always awaits before it can end, so `pass` is set before it is cleared.
    this.pass ??= this.passes();
  };

  private async passes() {
    while (this.again && !this.stopping) {
      this.again = false;
      clearTimeout(this.timer);
      let sleepMs = this.pollMs;
      try {
        await this.claimDue();
        // Woken during the claims or while asking when the next job is due (a handler finished, a job
        // was queued): the next pass starts at once, without waiting for that answer.
        if (!this.again) {
          const next = this.nextDueInMs();
          next.catch(() => {}); // when woken first, its answer (or failure) no longer matters
          const woken = new Promise<number>((resolve) => (this.onWake = () => resolve(0)));
          sleepMs = await Promise.race([next, woken]).finally(() => (this.onWake = undefined));
        }
      } catch (e) {
        log.error('job runner: claim failed', { error: String(e) });
      }
      if (!this.stopping) this.timer = setTimeout(this.wake, sleepMs);
    }
    this.pass = undefined;
  }

  private async claimDue() {
    const order = [...this.queues.slice(this.first), ...this.queues.slice(0, this.first)];
    this.first = (this.first + 1) % Math.max(1, this.queues.length);
    const freeIn = (queue: Queue) => Math.min(this.concurrency - this.running.size, queue.limit - queue.running);
    // A pass follows every finished handler: one probe tells which queues have work, rather than a
    // claim on each (most of them empty) before the slot is filled again. A queue whose handler just
    // finished is claimed without asking (it likely has more), while the probe asks about the others.
    const hot = this.finished;
    this.finished = new Set();
    const open = order.filter((q) => freeIn(q) > 0);
    const asked = open.filter((q) => !hot.has(q)).map((q) => q.definition.name);
    const claimable =
      open.length > 1 && asked.length
        ? this.db.sql.query<{ queue: string }>(CLAIMABLE_QUEUES, [asked]).then(
            (rows) => new Set(rows.map((r) => r.queue)),
            (e) => (log.warn('job runner: probe failed', { error: String(e) }), undefined),
          )
        : undefined;
    for (const queue of order) {
      const free = freeIn(queue);
      if (free <= 0 || this.stopping) continue;
      const { name, batch, fairness } = queue.definition;
      if (!hot.has(queue) && (await claimable)?.has(name) === false) continue;
      if (batch) {
        // Each claim's batches get tokens of their own (a fair claim appends each batch's rank).
        const token = `${this.id}:${++this.claims}`;
        const jobs = fairness
          ? await this.db.sql.query<ClaimedJob>(FAIR_BATCH_CLAIM, [token, this.leaseMs, name, free, fairness.perKey, batch.size])
          : await this.db.sql.query<ClaimedJob>(CLAIM, [token, this.leaseMs, name, batch.size]);
        const batches = new Map<string, ClaimedJob[]>();
        for (const job of jobs) batches.set(job.token, [...(batches.get(job.token) ?? []), job]);
        for (const [held, claimed] of batches)
          this.launch(queue, held, claimed, (signal) => this.executeBatch(queue, held, claimed, signal));
        continue;
      }
      const jobs = fairness
        ? await this.db.sql.query<ClaimedJob>(FAIR_CLAIM, [this.id, this.leaseMs, name, free, fairness.perKey])
        : await this.db.sql.query<ClaimedJob>(CLAIM, [this.id, this.leaseMs, name, free]);
      for (const job of jobs) this.launch(queue, job.id, [job], (signal) => this.execute(queue, job, signal));
    }
  }

  /** Full queues are left out: a finishing handler wakes the runner anyway. */
  private async nextDueInMs(): Promise<number> {
    const open = this.queues.filter((q) => q.running < q.limit).map((q) => q.definition);
    if (!open.length || this.running.size >= this.concurrency) return this.pollMs;
    const plain = open.filter((q) => !q.fairness).map((q) => q.name);
    const waits = await Promise.all([
      ...(plain.length ? [this.db.sql.query<{ ms: number | null }>(NEXT_DUE, [plain, this.id])] : []),
      ...open.flatMap(({ name, batch, fairness }) =>
        fairness
          ? [this.db.sql.query<{ ms: number | null }>(batch ? FAIR_BATCH_NEXT_DUE : FAIR_NEXT_DUE, [name, fairness.perKey, this.id])]
          : [],
      ),
    ]);
    const known = waits.map(([row]) => row.ms).filter((ms): ms is number => ms !== null);
    return known.length ? Math.min(this.pollMs, Math.max(MIN_SLEEP_MS, Math.ceil(Math.min(...known)))) : this.pollMs;
  }

  /** Runs one job or one batch in a slot of its own. */
  private launch(queue: Queue, key: string, jobs: ClaimedJob[], run: (signal: AbortSignal) => Promise<void>) {
    const controller = new AbortController();
    queue.running++;
    const done = run(controller.signal).finally(() => {
      queue.running--;
      this.finished.add(queue);
      this.running.delete(key);
      this.wake();
    });
    this.running.set(key, { done, controller, jobs });
  }

  private async execute(queue: Queue, job: ClaimedJob, signal: AbortSignal) {
    const { name } = queue.definition;
    const held = [job.id, this.id, job.attempts];
    if (job.attempts > queue.maxAttempts) {
      // The process running its last attempt died: the attempts are used up.
      log.error('job failed', { queue: name, job: job.id, attempt: queue.maxAttempts, error: 'lease expired' });
      return this.record(FAILED, [...held, queue.maxAttempts, 'lease expired during the last attempt (its process stopped)']);
    }
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    try {
      // Each attempt is a trace of its own when tracing is on: its SQL and HTTP calls are its children.
      const info = { id: job.id, queue: name, attempt: job.attempts, maxAttempts: queue.maxAttempts, signal };
      await traced(
        `job ${name}`,
        { 'job.queue': name, 'job.id': job.id, 'job.attempt': job.attempts },
        () => queue.definition.handler!(job.payload, info),
        {
          root: true,
        },
      );
    } catch (e) {
      const outcome = this.failure(queue, job, e, seconds());
      return outcome.kind === 'failed'
        ? this.record(FAILED, [...held, outcome.finalAttempts, outcome.error])
        : this.record(RETRY, [...held, outcome.delayMs, outcome.error]);
    }
    observeJob(name, 'done', seconds());
    return this.record(DONE, held);
  }

  /** What a failed attempt leads to (logged and counted): failed for good, or retried after a delay. */
  private failure(queue: Queue, job: ClaimedJob, e: unknown, seconds: number): Outcome {
    const { name } = queue.definition;
    const error = e instanceof Error ? e.message : String(e);
    const about = idsOf(job.payload);
    if (e instanceof FailJob || job.attempts >= queue.maxAttempts) {
      observeJob(name, 'failed', seconds);
      log.error('job failed', { queue: name, job: job.id, ...about, attempt: job.attempts, error });
      return { kind: 'failed', finalAttempts: job.attempts, error };
    }
    observeJob(name, 'retry', seconds);
    const delayMs = e instanceof RetryJob ? e.delayMs : queue.retryDelays[Math.min(job.attempts, queue.retryDelays.length) - 1];
    log.warn('job attempt failed', { queue: name, job: job.id, ...about, attempt: job.attempts, retry_in_ms: delayMs, error });
    return { kind: 'retry', delayMs, error };
  }

  /** One call of the batch handler for the jobs of one claim and token; all outcomes in one statement. */
  private async executeBatch(queue: Queue, token: string, jobs: ClaimedJob[], signal: AbortSignal) {
    const { name, batch } = queue.definition;
    const outcomes = new Map<ClaimedJob, Outcome>();
    // Jobs whose process died during their last attempt: the attempts are used up.
    const spent = jobs.filter((job) => job.attempts > queue.maxAttempts);
    for (const job of spent) {
      log.error('job failed', { queue: name, job: job.id, attempt: queue.maxAttempts, error: 'lease expired' });
      outcomes.set(job, {
        kind: 'failed',
        finalAttempts: queue.maxAttempts,
        error: 'lease expired during the last attempt (its process stopped)',
      });
    }
    const runnable = jobs.filter((job) => job.attempts <= queue.maxAttempts);
    if (runnable.length) {
      const started = performance.now();
      const seconds = () => (performance.now() - started) / 1000;
      const input = runnable.map((job) => ({
        payload: job.payload,
        job: { id: job.id, queue: name, attempt: job.attempts, maxAttempts: queue.maxAttempts, signal },
      }));
      let results: BatchOutcome[];
      try {
        results = await traced(`job ${name}`, { 'job.queue': name, 'job.batch': runnable.length }, () => batch!.handler(input, signal), {
          root: true,
        });
        if (results.length !== runnable.length)
          throw new Error(`batch handler answered ${results.length} outcomes for ${runnable.length} jobs`);
      } catch (e) {
        results = runnable.map(() => (e instanceof Error ? e : new Error(String(e))));
      }
      runnable.forEach((job, i) => {
        const result = results[i];
        if (result === 'done') observeJob(name, 'done', seconds());
        outcomes.set(job, result === 'done' || result === 'release' ? { kind: result } : this.failure(queue, job, result, seconds()));
      });
    }
    const rows = [...outcomes];
    if (rows.every(([, o]) => o.kind === 'done')) return this.record(BATCH_DONE, [rows.map(([job]) => job.id), token]);
    await this.record(OUTCOMES, [
      rows.map(([job]) => job.id),
      rows.map(([job]) => job.attempts),
      rows.map(([, o]) => o.kind),
      rows.map(([, o]) => o.delayMs ?? 0),
      rows.map(([, o]) => o.error ?? null),
      rows.map(([job, o]) => o.finalAttempts ?? job.attempts),
      token,
    ]);
  }

  /** If the outcome cannot be written, the lease runs out and the job runs again: at least once. */
  private async record(statement: string, params: unknown[]) {
    await this.db.sql
      .query(statement, params)
      .catch((e) => log.error('job runner: could not record an outcome', { job: params[0], error: String(e) }));
  }

  private async renewLeases() {
    if (!this.running.size) return;
    const held = [...this.running.values()].flatMap((r) => r.jobs);
    await this.db.sql
      .query(RENEW, [held.map((job) => job.id), held.map((job) => job.token), this.leaseMs])
      .catch((e) => log.warn('job runner: lease renewal failed', { error: String(e) }));
  }
}

/** The claim statements, for the tests that plan them against a queue's misleading statistics. */
export const claimStatements = { CLAIM, FAIR_CLAIM, FAIR_BATCH_CLAIM } as const;

/**
 * What a job's log lines name of its payload: the ids it carries (`tenant_id`, `webhook_id`,
 * `event_id`, `delivery_id`, `message_id`…), never other values, which may be a customer's data.
 */
function idsOf(payload: unknown): Record<string, string> {
  const ids: Record<string, string> = {};
  if (!payload || typeof payload !== 'object') return ids;
  for (const [key, value] of Object.entries(payload)) if (key.endsWith('_id') && typeof value === 'string') ids[key] = value.slice(0, 64);
  return ids;
}
