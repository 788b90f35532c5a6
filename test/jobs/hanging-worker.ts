// The child process of kill.test.ts: a job runner (on DATABASE_URL, or the PGlite directory PGLITE_DIR)
// whose handler prints the job it started and then hangs until the process is killed.
import { openDatabase } from '../../src/db/client.js';
import { defineQueue } from '../../src/jobs/queue.js';
import { runJobs } from '../../src/jobs/runner.js';

const env = process.env;
const db = await openDatabase(env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : { pgliteDir: env.PGLITE_DIR });
await runJobs(db, {
  leaseMs: Number(env.LEASE_MS),
  pollMs: 60_000,
  queues: [
    defineQueue({
      name: env.QUEUE!,
      handler: async (_payload, job) => {
        process.stdout.write(`started ${job.id} ${job.attempt}\n`);
        await new Promise(() => {});
      },
    }),
  ],
});
