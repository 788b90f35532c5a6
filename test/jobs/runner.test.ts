// The job runner on one database: transactional enqueue, retries, handler-chosen outcomes, prompt
// wake-ups (the fallback poll is a minute in these tests, so only the mechanisms can wake a runner in
// time), leases renewed while a handler runs, and draining on stop.
import { describe, expect, it, vi } from 'vitest';
import { TenantClients } from '../../src/db/tenant-scope.js';
import { enqueue } from '../../src/jobs/enqueue.js';
import { defineQueue, FailJob, RetryJob } from '../../src/jobs/queue.js';
import { setLogLevel } from '../../src/log.js';
import { jobRow, newQueueName, pendingJobs, sleep, useJobsDatabase } from './helpers.js';

const t = useJobsDatabase();
const within = { timeout: 10_000, interval: 20 };

describe('enqueue', () => {
  it('runs a job of a committed transaction once, and never one of a rolled-back transaction', async () => {
    const name = newQueueName();
    const ran: string[] = [];
    await t.runner({ queues: [defineQueue({ name, handler: async (p) => void ran.push(p.key as string) })] });
    const tenant = await t.db.prisma.tenant.create({ data: { name: 'Jobs' } });
    const scoped = new TenantClients(t.db.prisma).for(tenant.id);

    await expect(
      t.db.prisma.$transaction(async (tx) => {
        await enqueue(tx, name, { key: 'rolled back' });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    await t.db.prisma.$transaction((tx) => enqueue(tx, name, { key: 'unscoped' }));
    await scoped.$transaction((tx) => enqueue(tx, name, { key: 'scoped' }));

    await vi.waitFor(async () => expect(await pendingJobs(t.db, name)).toBe(0), within);
    expect(ran.sort()).toEqual(['scoped', 'unscoped']);
  });
});

describe('retries', () => {
  it('retries a failing handler per the schedule with the attempt number, then marks the job failed', async () => {
    const name = newQueueName();
    const calls: { attempt: number; maxAttempts: number; at: number }[] = [];
    await t.runner({
      queues: [
        defineQueue({
          name,
          retryDelays: [200, 400],
          handler: async (_p, job) => {
            calls.push({ attempt: job.attempt, maxAttempts: job.maxAttempts, at: Date.now() });
            throw new Error(`refused on attempt ${job.attempt}`);
          },
        }),
      ],
    });
    const id = await enqueue(t.db.prisma, name);

    await vi.waitFor(async () => expect((await jobRow(t.db, id))?.failed_at).toBeInstanceOf(Date), within);
    expect(calls.map((c) => [c.attempt, c.maxAttempts])).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    // Lower bounds only: each retry waited at least its delay (the database rounds times to the millisecond).
    expect(calls[1].at - calls[0].at).toBeGreaterThanOrEqual(190);
    expect(calls[2].at - calls[1].at).toBeGreaterThanOrEqual(390);
    expect(await jobRow(t.db, id)).toMatchObject({ attempts: 3, locked_by: null, last_error: 'refused on attempt 3' });
  });

  it('names the ids of the job’s payload on its failure lines, and nothing else of it', async () => {
    const name = newQueueName();
    const lines: string[] = [];
    setLogLevel('info');
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (lines.push(String(chunk)), true));
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (lines.push(String(chunk)), true));
    try {
      await t.runner({ queues: [defineQueue({ name, retryDelays: [50], handler: () => Promise.reject(new Error('receiver said no')) })] });
      const id = await enqueue(t.db.prisma, name, { webhook_id: 'hook-42', event_id: 'event-7', text: 'a customer’s words' });
      await vi.waitFor(async () => expect((await jobRow(t.db, id))?.failed_at).toBeInstanceOf(Date), within);
    } finally {
      setLogLevel('silent');
      vi.restoreAllMocks();
    }
    const failures = lines.filter((l) => l.includes(name));
    expect(failures.map((l) => JSON.parse(l).msg)).toEqual(['job attempt failed', 'job failed']);
    for (const l of failures) {
      expect(JSON.parse(l)).toMatchObject({ queue: name, webhook_id: 'hook-42', event_id: 'event-7', error: 'receiver said no' });
      expect(l).not.toContain('customer');
    }
  });

  it('honours a retry delay the handler asks for instead of the schedule', async () => {
    const name = newQueueName();
    const calls: { attempt: number; at: number }[] = [];
    await t.runner({
      queues: [
        defineQueue({
          name,
          retryDelays: [60_000],
          handler: async (_p, job) => {
            calls.push({ attempt: job.attempt, at: Date.now() });
            if (job.attempt === 1) throw new RetryJob('429 Too Many Requests', 300);
          },
        }),
      ],
    });
    const id = await enqueue(t.db.prisma, name);

    // The schedule would wait a minute; the requested 300 ms is what happens.
    await vi.waitFor(() => expect(calls).toHaveLength(2), within);
    expect(calls[1].attempt).toBe(2);
    expect(calls[1].at - calls[0].at).toBeGreaterThanOrEqual(290);
    await vi.waitFor(async () => expect(await jobRow(t.db, id)).toBeUndefined(), within);
  });

  it('stops at once when the handler fails the job for good', async () => {
    const name = newQueueName();
    let calls = 0;
    await t.runner({
      queues: [
        defineQueue({
          name,
          handler: async () => {
            calls++;
            throw new FailJob('410 Gone');
          },
        }),
      ],
    });
    const id = await enqueue(t.db.prisma, name);

    await vi.waitFor(async () => expect((await jobRow(t.db, id))?.failed_at).toBeInstanceOf(Date), within);
    expect(await jobRow(t.db, id)).toMatchObject({ attempts: 1, last_error: '410 Gone' });
    expect(calls).toBe(1);
  });
});

describe('waking up', () => {
  it('starts a job enqueued on an idle runner on the commit notification, not the fallback poll', async () => {
    const name = newQueueName();
    const ran: string[] = [];
    await t.runner({ queues: [defineQueue({ name, handler: async (p) => void ran.push(p.key as string) })] });
    // The first job proves the runner has made its start-up pass; it is idle afterwards (nothing due).
    await enqueue(t.db.prisma, name, { key: 'first' });
    await vi.waitFor(async () => expect(await pendingJobs(t.db, name)).toBe(0), within);
    await sleep(200);

    await t.db.prisma.$transaction((tx) => enqueue(tx, name, { key: 'second' }));
    // The poll would come after 60 s; only the NOTIFY delivered on commit can start it within 10 s.
    await vi.waitFor(() => expect(ran).toEqual(['first', 'second']), within);
  });

  it('wakes for a delayed job when it is due', async () => {
    const name = newQueueName();
    let ranAt = 0;
    await t.runner({ queues: [defineQueue({ name, handler: async () => void (ranAt = Date.now()) })] });
    const enqueuedAt = Date.now();
    await enqueue(t.db.prisma, name, {}, { delayMs: 500 });

    await vi.waitFor(() => expect(ranAt).toBeGreaterThan(0), within);
    expect(ranAt - enqueuedAt).toBeGreaterThanOrEqual(490);
  });
});

describe('leases', () => {
  it('keeps a job that outlasts its lease from a second runner while the handler is alive', async () => {
    const name = newQueueName();
    const attempts: number[] = [];
    const queue = defineQueue({
      name,
      handler: async (_p, job) => {
        attempts.push(job.attempt);
        await sleep(1_500);
      },
    });
    await t.runner({ queues: [queue], leaseMs: 300 });
    const id = await enqueue(t.db.prisma, name);
    await vi.waitFor(() => expect(attempts).toEqual([1]), within);
    // The second runner wakes when the lease it sees would end; the heartbeat has moved it on every time.
    await t.runner({ queues: [queue], leaseMs: 300 });

    await vi.waitFor(async () => expect(await jobRow(t.db, id)).toBeUndefined(), within);
    expect(attempts).toEqual([1]);
  });
});

describe('stop', () => {
  it('stops claiming and waits for the running handlers', async () => {
    const name = newQueueName();
    const started: string[] = [];
    const finished: string[] = [];
    const runner = await t.runner({
      queues: [
        defineQueue({
          name,
          handler: async (p) => {
            started.push(p.key as string);
            await sleep(300);
            finished.push(p.key as string);
          },
        }),
      ],
    });
    const id = await enqueue(t.db.prisma, name, { key: 'running' });
    await vi.waitFor(() => expect(started).toEqual(['running']), within);

    await runner.stop();
    expect(finished).toEqual(['running']);
    expect(await jobRow(t.db, id)).toBeUndefined();

    const later = await enqueue(t.db.prisma, name, { key: 'after stop' });
    await sleep(300);
    expect(started).toEqual(['running']);
    expect(await jobRow(t.db, later)).toMatchObject({ attempts: 0, locked_by: null });
  });

  it('gives up on a handler after the timeout, aborts it, and keeps its job', async () => {
    const name = newQueueName();
    let signal: AbortSignal | undefined;
    const runner = await t.runner({
      queues: [
        defineQueue({
          name,
          handler: (_p, job) => {
            signal = job.signal;
            return new Promise((_resolve, reject) => job.signal.addEventListener('abort', () => reject(new Error('aborted at shutdown'))));
          },
        }),
      ],
    });
    const id = await enqueue(t.db.prisma, name);
    await vi.waitFor(() => expect(signal).toBeDefined(), within);

    await runner.stop({ timeoutMs: 200 });
    expect(signal?.aborted).toBe(true);
    // Not lost: the aborted attempt is recorded as failed and the job waits for its retry.
    await vi.waitFor(
      async () => expect(await jobRow(t.db, id)).toMatchObject({ attempts: 1, locked_by: null, last_error: 'aborted at shutdown' }),
      within,
    );
  });
});
