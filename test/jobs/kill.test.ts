// A worker process killed with SIGKILL while its handlers run loses nothing: once its leases run out,
// another runner takes the jobs (the next attempt) and runs each once. On PostgreSQL the other runner
// is alive all along and must leave the jobs alone while the worker's heartbeat renews their leases.
// On PGlite (one process per data directory) the other runner is the restarted process.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it, vi } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.js';
import { enqueue } from '../../src/jobs/enqueue.js';
import { defineQueue } from '../../src/jobs/queue.js';
import { runJobs, type JobRunner } from '../../src/jobs/runner.js';
import { openTestDatabase, testDatabaseKind } from '../helpers/database.js';
import { sleep } from './helpers.js';

const LEASE_MS = 1_000;
const QUEUE = 'test.kill';
const cleanup: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
});

/** Starts the worker and resolves when it has started all `count` jobs, with their ids. */
async function startWorker(env: Record<string, string>, count: number) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/jobs/hanging-worker.ts'], {
    env: { ...process.env, ...env, QUEUE, LEASE_MS: String(LEASE_MS) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  cleanup.push(async () => void child.kill('SIGKILL'));
  const started = new Map<string, number>();
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      for (const [, id, attempt] of out.matchAll(/started (\S+) (\d+)\n/g)) started.set(id, Number(attempt));
      if (started.size === count) resolve();
    });
    void exited.then(() => reject(new Error(`worker exited early: ${out}`)));
  });
  return { started, kill: async () => (child.kill('SIGKILL'), await exited) };
}

async function runsAfterKill(db: Database, ids: string[]) {
  const runs: { id: string; attempt: number }[] = [];
  const runner: JobRunner = await runJobs(db, {
    leaseMs: LEASE_MS,
    pollMs: 60_000, // it must wake when the dead worker's leases end, not on a poll
    queues: [defineQueue({ name: QUEUE, handler: async (_p, job) => void runs.push({ id: job.id, attempt: job.attempt }) })],
  });
  return { runs, runner, expectedIds: ids.sort() };
}

it.runIf(testDatabaseKind() === 'postgres')(
  'PostgreSQL: a killed worker’s jobs are left alone while it lives, then each runs once after its leases end',
  async () => {
    const db = await openTestDatabase();
    cleanup.push(() => db.close());
    const ids = await db.prisma.$transaction(async (tx) => Promise.all([1, 2, 3].map((n) => enqueue(tx, QUEUE, { n }))));
    const worker = await startWorker({ DATABASE_URL: db.url! }, 3);
    expect([...worker.started.values()]).toEqual([1, 1, 1]);

    const { runs, runner, expectedIds } = await runsAfterKill(db, ids);
    cleanup.push(() => runner.stop());
    await sleep(LEASE_MS * 2.5);
    expect(runs).toEqual([]); // the live worker's heartbeat keeps its leases current

    expect(await worker.kill()).toBe('SIGKILL');
    await vi.waitFor(() => expect(runs).toHaveLength(3), { timeout: 15_000 });
    expect(runs.map((r) => r.id).sort()).toEqual(expectedIds);
    expect(runs.every((r) => r.attempt === 2)).toBe(true);
    await vi.waitFor(async () => expect(await db.sql.query('SELECT id FROM jobs')).toEqual([]), { timeout: 5_000 });
  },
);

it.runIf(testDatabaseKind() === 'pglite')('PGlite: jobs of a killed process run when the process starts again', async () => {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'funil-kill-')), 'db');
  cleanup.push(async () => fs.rmSync(path.dirname(dir), { recursive: true, force: true }));
  let db = await openDatabase({ pgliteDir: dir });
  const ids = await db.prisma.$transaction(async (tx) => Promise.all([1, 2, 3].map((n) => enqueue(tx, QUEUE, { n }))));
  await db.close();
  const worker = await startWorker({ PGLITE_DIR: dir }, 3);
  expect(await worker.kill()).toBe('SIGKILL');

  db = await openDatabase({ pgliteDir: dir });
  cleanup.push(() => db.close());
  const { runs, runner, expectedIds } = await runsAfterKill(db, ids);
  cleanup.push(() => runner.stop());
  await vi.waitFor(() => expect(runs).toHaveLength(3), { timeout: 15_000 });
  expect(runs.map((r) => r.id).sort()).toEqual(expectedIds);
  expect(runs.every((r) => r.attempt === 2)).toBe(true);
  await vi.waitFor(async () => expect(await db.sql.query('SELECT id FROM jobs')).toEqual([]), { timeout: 5_000 });
});
