// Shared by the job tests: one database per file, runners stopped after each test, a fresh queue name
// per test (the jobs table is shared by the file's tests).
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { runJobs, type JobRunner, type JobRunnerOptions } from '../../src/jobs/runner.js';
import { openTestDatabase } from '../helpers/database.js';

export type TestDatabase = Database & { url?: string };

export function useJobsDatabase() {
  const state = { db: undefined as unknown as TestDatabase };
  const runners: JobRunner[] = [];
  beforeAll(async () => {
    state.db = await openTestDatabase();
  });
  const stopRunners = () => Promise.all(runners.splice(0).map((r) => r.stop({ timeoutMs: 2_000 })));
  afterEach(stopRunners);
  afterAll(async () => {
    await state.db?.close();
  });
  return {
    get db() {
      return state.db;
    },
    /** Before closing a database a runner uses. */
    stopRunners,
    /** A runner that only a notification, a known due time or a finishing handler wakes: the fallback poll is a minute. */
    async runner(options: JobRunnerOptions, db: Pick<Database, 'sql' | 'listen'> = state.db) {
      const runner = await runJobs(db, { pollMs: 60_000, ...options });
      runners.push(runner);
      return runner;
    },
  };
}

let queues = 0;
export const newQueueName = () => `test.queue${++queues}`;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface JobRow {
  id: string;
  attempts: number;
  failed_at: Date | null;
  locked_by: string | null;
  last_error: string | null;
}

export async function jobRow(db: Database, id: string): Promise<JobRow | undefined> {
  const [row] = await db.sql.query<JobRow>('SELECT id::text AS id, attempts, failed_at, locked_by, last_error FROM jobs WHERE id = $1', [
    id,
  ]);
  return row;
}

export async function pendingJobs(db: Database, queue: string): Promise<number> {
  const [{ n }] = await db.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs WHERE queue = $1', [queue]);
  return n;
}
