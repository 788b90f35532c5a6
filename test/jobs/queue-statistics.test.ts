// The jobs table is a queue, so its statistics mislead the planner: analysed when it happened to be
// empty (as autovacuum does after a drained burst), it is believed to hold one row however many it
// holds. Every claim must still do work in proportion to the queue, not to its square, and claim no
// more than it was asked for. The work is counted in the plan (rows each node produced × its loops),
// not timed. Before the claims reached jobs only by id = ANY(ARRAY(...)), here a plain claim of 50 took
// 79 to 94 jobs, a fair claim of 10 took 100 (past the slots free and the groups' caps), and a fair
// batch claim produced about 14 million rows.
import { beforeAll, describe, expect, it } from 'vitest';
import { claimStatements } from '../../src/jobs/runner.js';
import { newQueueName, useJobsDatabase } from './helpers.js';

const t = useJobsDatabase();
const DUE = 1_000;
/** Generous for a linear plan (the claims here produce 1.3–8 rows per due job, on both databases), far below a quadratic one. */
const ROWS_PER_DUE_JOB = 40;

interface PlanNode {
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** The plan of an EXPLAIN (FORMAT JSON): both drivers parse its json column. */
async function planOf<P>(statement: string, params: unknown[]): Promise<P> {
  const [row] = await t.db.sql.query<{ 'QUERY PLAN': [{ Plan: P }] }>(statement, params);
  return row['QUERY PLAN'][0].Plan;
}

/** The rows a plan's nodes produced or read and dropped (a filter's), × their loops. */
const produced = (node: PlanNode): number =>
  ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0)) * (node['Actual Loops'] ?? 1) +
  (node.Plans ?? []).reduce((sum, child) => sum + produced(child), 0);

beforeAll(async () => {
  if (t.db.kind === 'postgres') await t.db.sql.query('ALTER TABLE jobs SET (autovacuum_enabled = false)');
  // Filled and drained without a vacuum, then analysed empty: its pages remain, its rows are counted 0.
  const fill = newQueueName();
  await t.db.sql.query(`INSERT INTO jobs (queue, payload) SELECT $1, jsonb_build_object('n', n) FROM generate_series(1, $2::int) AS n`, [
    fill,
    DUE,
  ]);
  await t.db.sql.query('DELETE FROM jobs WHERE queue = $1', [fill]);
  await t.db.sql.query('ANALYZE jobs');
});

/** `due` due jobs in `groups` groups (none: a plain queue's jobs); answers the queue's name. */
async function dueQueue(groups: number | undefined, due = DUE): Promise<string> {
  const queue = newQueueName();
  await t.db.sql.query(
    `INSERT INTO jobs (queue, payload, run_at, group_key)
     SELECT $1, jsonb_build_object('n', n), now() - interval '1 second', CASE WHEN $2::int IS NULL THEN '' ELSE (n % $2::int)::text END
     FROM generate_series(1, $3::int) AS n`,
    [queue, groups ?? null, due],
  );
  return queue;
}

/** Runs the claim under EXPLAIN ANALYZE (which performs it): the rows its plan produced, and what it claimed. */
async function claim(statement: string, params: unknown[], queue: string) {
  const plan = await planOf<PlanNode>(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement}`, params);
  const held = await t.db.sql.query<{ token: string; n: number }>(
    'SELECT locked_by AS token, count(*)::int AS n FROM jobs WHERE queue = $1 AND locked_by IS NOT NULL GROUP BY 1 ORDER BY 1',
    [queue],
  );
  return { produced: produced(plan), held };
}

describe('claims on a queue whose statistics say it is empty', () => {
  it('the planner is misled: the table is believed to be nearly empty', async () => {
    const queue = await dueQueue(undefined);
    const plan = await planOf<{ 'Plan Rows': number }>('EXPLAIN (FORMAT JSON) SELECT id FROM jobs WHERE queue = $1', [queue]);
    // The premise of the other tests: without it they would prove nothing.
    expect(plan['Plan Rows']).toBeLessThan(DUE / 10);
  });

  it('a plain claim takes exactly its limit, in work linear in the queue', async () => {
    const queue = await dueQueue(undefined);
    const result = await claim(claimStatements.CLAIM, ['test:plain', 30_000, queue, 50], queue);
    expect(result.held).toEqual([{ token: 'test:plain', n: 50 }]);
    expect(result.produced).toBeLessThan(ROWS_PER_DUE_JOB * DUE);
  });

  it('a fair claim takes its groups’ shares, in work linear in the queue', async () => {
    const queue = await dueQueue(100);
    // 10 slots free, at most 2 running per group: 10 jobs, of 10 groups (one each: fewer running first).
    const result = await claim(claimStatements.FAIR_CLAIM, ['test:fair', 30_000, queue, 10, 2], queue);
    expect(result.held).toEqual([{ token: 'test:fair', n: 10 }]);
    const groups = await t.db.sql.query<{ k: string }>('SELECT DISTINCT group_key FROM jobs WHERE queue = $1 AND locked_by IS NOT NULL', [
      queue,
    ]);
    expect(groups).toHaveLength(10);
    expect(result.produced).toBeLessThan(ROWS_PER_DUE_JOB * DUE);
  });

  it('a fair batch claim deals one group’s jobs into its free batches, in work linear in the queue', async () => {
    const queue = await dueQueue(1);
    // One group, 4 batches at most, 50 jobs each: 4 batches of 50, each under a token of its own.
    const result = await claim(claimStatements.FAIR_BATCH_CLAIM, ['test:batch', 30_000, queue, 9, 4, 50], queue);
    expect(result.held).toEqual(['test:batch:1', 'test:batch:2', 'test:batch:3', 'test:batch:4'].map((token) => ({ token, n: 50 })));
    expect(result.produced).toBeLessThan(ROWS_PER_DUE_JOB * DUE);
  });
});

describe('a fair claim beside one group’s flood', () => {
  const BACKLOG = 20_000;

  /** BACKLOG due jobs of group 'flood' and one of group 'quiet'. */
  async function floodedQueue(): Promise<string> {
    const queue = await dueQueue(undefined, 0);
    await t.db.sql.query(
      `INSERT INTO jobs (queue, payload, run_at, group_key)
       SELECT $1, jsonb_build_object('n', n), now() - interval '1 second', CASE WHEN n = 0 THEN 'quiet' ELSE 'flood' END
       FROM generate_series(0, $2::int) AS n`,
      [queue, BACKLOG],
    );
    return queue;
  }

  it('a fair batch claim reads the jobs it takes and one probe per group, not the backlog', async () => {
    const queue = await floodedQueue();
    const result = await claim(claimStatements.FAIR_BATCH_CLAIM, ['test:flood', 30_000, queue, 9, 4, 50], queue);
    // The quiet group's job and the flood's 4 batches of 50.
    expect(result.held.map((h) => h.n).sort((a, b) => a - b)).toEqual([1, 50, 50, 50, 50]);
    // About 10 rows per job taken; reading the backlog once would be 20,000.
    expect(result.produced).toBeLessThan(BACKLOG / 4);
  });

  it('a fair claim too', async () => {
    const queue = await floodedQueue();
    const result = await claim(claimStatements.FAIR_CLAIM, ['test:flood', 30_000, queue, 10, 4], queue);
    const groups = await t.db.sql.query<{ group_key: string; n: number }>(
      'SELECT group_key, count(*)::int AS n FROM jobs WHERE queue = $1 AND locked_by IS NOT NULL GROUP BY 1 ORDER BY 1',
      [queue],
    );
    expect(groups).toEqual([
      { group_key: 'flood', n: 4 },
      { group_key: 'quiet', n: 1 },
    ]);
    expect(result.produced).toBeLessThan(BACKLOG / 4);
  });
});
