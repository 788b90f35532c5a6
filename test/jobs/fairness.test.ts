// Fair queues (queue `fairness`): at most `perKey` jobs of one group at once across every runner (on
// PostgreSQL two pools, as two server processes), groups claimed in turns, and a job left by a killed
// runner claimed again once its lease ends.
import { describe, expect, it, vi } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import { enqueueMany } from '../../src/jobs/enqueue.js';
import { defineQueue, fairQueue } from '../../src/jobs/queue.js';
import { runJobs } from '../../src/jobs/runner.js';
import { newQueueName, pendingJobs, sleep, useJobsDatabase } from './helpers.js';

const t = useJobsDatabase();
/** A fair queue of a new name whose jobs are grouped by their payload's `key`. */
const newFairQueue = () => fairQueue(newQueueName(), 'key');

describe('a fair queue', () => {
  it('runs at most 4 of a group at once across two runners, and another group’s job at once', async () => {
    const name = newFairQueue();
    const second = t.db.kind === 'postgres' ? await openDatabase({ databaseUrl: t.db.url, poolSize: 5 }) : t.db;
    const running = new Map<string, number>();
    const most = new Map<string, number>();
    const started: { key: string; at: number }[] = [];
    try {
      for (const db of [t.db, second]) {
        const queue = defineQueue<{ key: string }>({
          name,
          fairness: { perKey: 4 },
          handler: async ({ key }) => {
            running.set(key, (running.get(key) ?? 0) + 1);
            most.set(key, Math.max(most.get(key) ?? 0, running.get(key)!));
            started.push({ key, at: Date.now() });
            await sleep(key === 'slow' ? 600 : 10);
            running.set(key, running.get(key)! - 1);
          },
        });
        await t.runner({ queues: [queue], concurrency: 8 }, db);
      }
      await enqueueMany(
        t.db.prisma,
        name,
        Array.from({ length: 24 }, () => ({ key: 'slow' })),
      );
      await vi.waitFor(() => expect(started.length).toBeGreaterThan(0), { timeout: 5_000, interval: 20 });
      const sent = Date.now();
      await enqueueMany(t.db.prisma, name, [{ key: 'other' }, { key: 'other' }]);
      await vi.waitFor(() => expect(started.filter((s) => s.key === 'other')).toHaveLength(2), { timeout: 5_000, interval: 20 });
      expect(Math.max(...started.filter((s) => s.key === 'other').map((s) => s.at)) - sent).toBeLessThan(1_000);
      await vi.waitFor(async () => expect(await pendingJobs(t.db, name.queue)).toBe(0), { timeout: 30_000, interval: 50 });
      expect(most.get('slow')).toBe(4);
    } finally {
      if (second !== t.db) {
        await t.stopRunners();
        await second.close();
      }
    }
  });

  it('claims the groups in turns: the first job of each group before the second of any', async () => {
    const name = newFairQueue();
    const started: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    await enqueueMany(t.db.prisma, name, [
      ...Array.from({ length: 6 }, () => ({ key: 'a' })),
      ...Array.from({ length: 2 }, () => ({ key: 'b' })),
      { key: 'c' },
    ]);
    await t.runner({
      concurrency: 5,
      queues: [defineQueue<{ key: string }>({ name, fairness: { perKey: 4 }, handler: async ({ key }) => (started.push(key), gate) })],
    });
    await vi.waitFor(() => expect(started).toHaveLength(5), { timeout: 10_000, interval: 20 });
    // One claim of 5: a, b and c once, then the second of a and of b (c has no second).
    expect(started.sort()).toEqual(['a', 'a', 'b', 'b', 'c']);
    release();
    await vi.waitFor(async () => expect(await pendingJobs(t.db, name.queue)).toBe(0), { timeout: 10_000, interval: 20 });
  });

  it('claims again the jobs of a runner that died once their lease ends, within the group’s cap', async () => {
    const name = newFairQueue();
    await enqueueMany(
      t.db.prisma,
      name,
      Array.from({ length: 6 }, () => ({ key: 'k' })),
    );
    // A runner that claims and never finishes: what a killed process leaves (its lease is not renewed
    // once stopped without waiting).
    let held = 0;
    const dead = await runJobs(t.db, {
      leaseMs: 600,
      pollMs: 60_000,
      queues: [defineQueue({ name, fairness: { perKey: 4 }, handler: () => (held++, new Promise<void>(() => {})) })],
    });
    await vi.waitFor(() => expect(held).toBe(4), { timeout: 5_000, interval: 20 });
    await dead.stop({ timeoutMs: 0 });
    let done = 0;
    let running = 0;
    let most = 0;
    await t.runner({
      pollMs: 200,
      queues: [
        defineQueue({
          name,
          fairness: { perKey: 4 },
          handler: async () => {
            most = Math.max(most, ++running);
            await sleep(50);
            running--;
            done++;
          },
        }),
      ],
    });
    await vi.waitFor(async () => expect(await pendingJobs(t.db, name.queue)).toBe(0), { timeout: 15_000, interval: 50 });
    expect(done).toBe(6);
    expect(most).toBeLessThanOrEqual(4);
  });

  it('is named by fairQueue, and only a fair queue is: a grouped job of a plain queue would never be claimed', () => {
    const handler = async () => {};
    expect(() => defineQueue({ name: newQueueName(), fairness: { perKey: 4 }, handler } as never)).toThrow(/fairQueue/);
    expect(() => defineQueue({ name: newFairQueue(), handler } as never)).toThrow(/fairQueue/);
    const fair = newFairQueue();
    expect(defineQueue({ name: fair, fairness: { perKey: 4 }, handler }).name).toBe(fair.queue);
  });
});
