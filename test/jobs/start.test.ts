// The process-level switch: WORKERS and WORKER_CONCURRENCY are validated with the rest of the
// environment, and startJobRunner starts (and stops) the workers only when WORKERS is not false.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startJobRunner } from '../../src/workers.js';
import { useJobsDatabase } from './helpers.js';

const t = useJobsDatabase();

describe('configuration', () => {
  it('runs workers by default, ten jobs at once', () => {
    expect(loadConfig({})).toMatchObject({ workers: true, workerConcurrency: 10 });
    expect(loadConfig({ WORKERS: 'false', WORKER_CONCURRENCY: '3' })).toMatchObject({ workers: false, workerConcurrency: 3 });
  });

  it('refuses values that mean nothing', () => {
    expect(() => loadConfig({ WORKERS: 'sometimes' })).toThrow('WORKERS must be true or false, got "sometimes"');
    expect(() => loadConfig({ WORKER_CONCURRENCY: '0' })).toThrow('WORKER_CONCURRENCY must be a whole number >= 1, got "0"');
  });
});

describe('startJobRunner', () => {
  it('starts and drains the workers, or does nothing with WORKERS=false', async () => {
    for (const WORKERS of ['true', 'false']) {
      const jobs = await startJobRunner(t.db, loadConfig({ WORKERS }));
      await expect(jobs.stop()).resolves.toBeUndefined();
    }
  });
});
