// The embedded database's vacuum (src/jobs/embedded-vacuum.ts): PGlite never runs autovacuum, so a
// periodic job vacuums and analyses the tables past autovacuum's thresholds. A queue that churns stops
// growing once vacuumed; the start hook schedules the job on PGlite only, and each run queues the next.
import { describe, expect, it } from 'vitest';
import {
  EMBEDDED_VACUUM_INTERVAL_MS,
  EMBEDDED_VACUUM_QUEUE,
  embeddedVacuumQueue,
  startEmbeddedVacuum,
  vacuumWhereDue,
} from '../../src/jobs/embedded-vacuum.js';
import { loadConfig } from '../../src/config.js';
import { testDatabaseKind } from '../helpers/env.js';
import { pendingJobs, useJobsDatabase } from './helpers.js';

const t = useJobsDatabase();
const onPGlite = testDatabaseKind() === 'pglite';

/** A thousand jobs of a queue no runner claims, queued and finished (deleted): the queue's churn. */
const churn = async () => {
  await t.db.sql.query(
    `INSERT INTO jobs (queue, payload) SELECT 'test.churn', jsonb_build_object('n', g, 'pad', repeat('x', 200)) FROM generate_series(1, 1000) g`,
  );
  await t.db.sql.query(`DELETE FROM jobs WHERE queue = 'test.churn'`);
};
const jobsHeapBytes = async () => {
  const [{ bytes }] = await t.db.sql.query<{ bytes: number }>(`SELECT pg_relation_size('jobs')::int AS bytes`);
  return bytes;
};

describe.runIf(onPGlite)('the embedded database vacuum', () => {
  it('vacuums a churned queue, which then stops growing, and leaves tables that are not due', { timeout: 60_000 }, async () => {
    await churn();
    const oneRound = await jobsHeapBytes();
    for (let i = 0; i < 4; i++) await churn();
    // Unvacuumed, each round's rows take new pages: the freed ones are never reused.
    const unvacuumed = await jobsHeapBytes();
    expect(unvacuumed).toBeGreaterThanOrEqual(4 * oneRound);

    const done = await vacuumWhereDue(t.db.sql);
    expect(done).toContainEqual({ table: 'public.jobs', statement: 'VACUUM (ANALYZE)' });
    // Nothing is due right after.
    expect((await vacuumWhereDue(t.db.sql)).map((d) => d.table)).not.toContain('public.jobs');

    for (let i = 0; i < 5; i++) {
      await churn();
      await vacuumWhereDue(t.db.sql);
    }
    // Vacuumed after each round, the queue reuses its pages.
    expect(await jobsHeapBytes()).toBeLessThanOrEqual(unvacuumed);
  });

  it('is scheduled at start, and each run queues the next a minute later', { timeout: 60_000 }, async () => {
    await churn();
    startEmbeddedVacuum(t.db);
    await expect.poll(() => pendingJobs(t.db, EMBEDDED_VACUUM_QUEUE), { timeout: 10_000 }).toBe(1);
    await t.runner({ queues: [embeddedVacuumQueue({ db: t.db, config: loadConfig({}) })] });
    const vacuumed = async () => {
      const [row] = await t.db.sql.query<{ n_dead_tup: number; last_vacuum: Date | null }>(
        `SELECT n_dead_tup::int AS n_dead_tup, last_vacuum FROM pg_stat_user_tables WHERE relname = 'jobs'`,
      );
      return row.last_vacuum !== null && row.n_dead_tup === 0;
    };
    await expect.poll(vacuumed, { timeout: 20_000 }).toBe(true);
    // The run is finished (its row deleted) and exactly one successor waits about a minute.
    await expect.poll(() => pendingJobs(t.db, EMBEDDED_VACUUM_QUEUE), { timeout: 10_000 }).toBe(1);
    const [next] = await t.db.sql.query<{ delay_s: number }>(
      `SELECT extract(epoch FROM run_at - now())::float8 AS delay_s FROM jobs WHERE queue = $1 AND failed_at IS NULL`,
      [EMBEDDED_VACUUM_QUEUE],
    );
    expect(next.delay_s).toBeGreaterThan(EMBEDDED_VACUUM_INTERVAL_MS / 1000 - 15);
  });
});

describe.runIf(!onPGlite)('on PostgreSQL (its own autovacuum)', () => {
  it('is never scheduled', async () => {
    startEmbeddedVacuum(t.db);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await pendingJobs(t.db, EMBEDDED_VACUUM_QUEUE)).toBe(0);
  });
});
