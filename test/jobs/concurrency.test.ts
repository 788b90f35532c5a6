// Several runners on one database never run a job twice; a slow queue does not hold up the others.
// On PostgreSQL the two runners use two pools (as two server processes would); PGlite has one connection,
// so there they share it.
import { describe, expect, it, vi } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import { enqueue } from '../../src/jobs/enqueue.js';
import { defineQueue } from '../../src/jobs/queue.js';
import { newQueueName, pendingJobs, sleep, useJobsDatabase } from './helpers.js';

const t = useJobsDatabase();

describe('two runners', () => {
  it('run each of 200 jobs exactly once', async () => {
    const name = newQueueName();
    await t.db.sql.script('CREATE TABLE test_job_runs (n int NOT NULL, runner text NOT NULL)');
    const second = t.db.kind === 'postgres' ? await openDatabase({ databaseUrl: t.db.url, poolSize: 5 }) : t.db;
    try {
      for (const [label, db] of [
        ['a', t.db],
        ['b', second],
      ] as const) {
        const queue = defineQueue({
          name,
          handler: async (p) => {
            await db.sql.query('INSERT INTO test_job_runs (n, runner) VALUES ($1, $2)', [p.n, label]);
            await sleep(2); // holds its slot a little, so both runners are claiming at the same time
          },
        });
        await t.runner({ queues: [queue], concurrency: 8 }, db);
      }
      await t.db.prisma.$transaction(
        async (tx) => {
          for (let n = 0; n < 200; n++) await enqueue(tx, name, { n });
        },
        { timeout: 60_000 },
      );

      await vi.waitFor(async () => expect(await pendingJobs(t.db, name)).toBe(0), { timeout: 30_000, interval: 50 });
      const [runs] = await t.db.sql.query<{ total: number; distinct: number }>(
        'SELECT count(*)::int AS total, count(DISTINCT n)::int AS distinct FROM test_job_runs',
      );
      expect(runs).toEqual({ total: 200, distinct: 200 });
    } finally {
      if (second !== t.db) {
        await t.stopRunners();
        await second.close();
      }
    }
  });
});

describe('concurrency', () => {
  it('runs other queues while one queue’s jobs are stuck at its own limit', async () => {
    const slow = newQueueName();
    const fast = newQueueName();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let slowStarted = 0;
    const fastDone: number[] = [];
    await t.runner({
      concurrency: 4,
      queues: [
        defineQueue({
          name: slow,
          concurrency: 2,
          handler: async () => {
            slowStarted++;
            await gate;
          },
        }),
        defineQueue({ name: fast, handler: async (p) => void fastDone.push(p.n as number) }),
      ],
    });
    for (let n = 0; n < 5; n++) await enqueue(t.db.prisma, slow, { n });
    await vi.waitFor(() => expect(slowStarted).toBe(2), { timeout: 10_000 });
    for (let n = 0; n < 6; n++) await enqueue(t.db.prisma, fast, { n });

    await vi.waitFor(() => expect(fastDone.sort()).toEqual([0, 1, 2, 3, 4, 5]), { timeout: 10_000 });
    expect(slowStarted).toBe(2);
    release();
    await vi.waitFor(async () => expect(await pendingJobs(t.db, slow)).toBe(0), { timeout: 10_000 });
    expect(slowStarted).toBe(5);
  });
});
