// The hourly cleanup through the job runner: one run pending at a time however often it is scheduled,
// a run removes every organisation's expired PENDING uploads (records and files) and queues the next
// run an hour later; the start-up upkeep schedules it.
import fs from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { CLEANUP_QUEUE, scheduleUploadCleanup, startUploadsUpkeep, uploadCleanupQueue } from '../../src/domains/uploads/cleanup-job.js';
import { runJobs, type JobRunner } from '../../src/jobs/runner.js';
import { ageUpload, keyOf, upload, useUploadApp } from './helpers.js';

const { api, root, store } = useUploadApp();
const runners: JobRunner[] = [];
afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.stop({ timeoutMs: 2_000 })));
  await api.db.sql.query(`DELETE FROM jobs WHERE queue = '${CLEANUP_QUEUE}'`);
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const pendingRuns = async () =>
  api.db.sql.query<{ id: string; delay_s: number }>(
    `SELECT id::text AS id, extract(epoch FROM run_at - now())::float8 AS delay_s FROM jobs WHERE queue = '${CLEANUP_QUEUE}' AND failed_at IS NULL`,
  );

describe('the scheduled uploads cleanup', () => {
  it('keeps one run pending however often, and however concurrently, it is scheduled', async () => {
    expect(await scheduleUploadCleanup(api.db.prisma, { delayMs: 60_000 })).toBe(true);
    expect(await scheduleUploadCleanup(api.db.prisma)).toBe(false);
    const results = await Promise.all(Array.from({ length: 5 }, () => scheduleUploadCleanup(api.db.prisma)));
    expect(results.every((r) => r === false)).toBe(true);
    const [only] = await pendingRuns();
    expect(await pendingRuns()).toHaveLength(1);
    // The running job itself does not count: it queues its successor.
    expect(await scheduleUploadCleanup(api.db.prisma, { delayMs: 1000, except: only.id })).toBe(true);
    expect(await pendingRuns()).toHaveLength(2);
  });

  it('a run removes expired PENDING uploads of every organisation and queues the next run an hour later', async () => {
    const a = await api.newOrg('A');
    const b = await api.newOrg('B');
    const expiredA = await upload(api, a.key);
    const expiredB = await upload(api, b.key);
    const associated = await upload(api, b.key);
    const recent = await upload(api, a.key);
    await api.rest('PUT', `/backend/uploads/${associated.id}/status`, { key: b.key, body: { status: 'ASSOCIATED' } });
    for (const u of [expiredA, expiredB, associated]) await ageUpload(api, u.id, 30);

    runners.push(await runJobs(api.db, { queues: [uploadCleanupQueue({ db: api.db, config: api.config })], pollMs: 60_000 }));
    await scheduleUploadCleanup(api.db.prisma);
    // The files go right after their records.
    const expiredKeys = [expiredA, expiredB].map((u) => keyOf(u.file_url));
    await expect
      .poll(async () => (await store.contents()).filter((f) => expiredKeys.some((key) => f.endsWith(key))).length, { timeout: 30_000 })
      .toBe(0);
    expect(await api.db.prisma.upload.count({ where: { id: { in: [expiredA.id, expiredB.id] } } })).toBe(0);
    for (const kept of [associated, recent]) {
      expect(await api.db.prisma.upload.count({ where: { id: kept.id } })).toBe(1);
      expect(await store.has(keyOf(kept.file_url))).toBe(true);
    }
    // The run is finished (its row deleted) and exactly one successor waits about an hour.
    await expect.poll(async () => (await pendingRuns()).length, { timeout: 10_000 }).toBe(1);
    const [next] = await pendingRuns();
    expect(next.delay_s).toBeGreaterThan(3500);
    expect(next.delay_s).toBeLessThanOrEqual(3600);
  });

  it('the start-up upkeep sweeps storage and schedules the cleanup', async () => {
    const orphan = (await api.app.deps.storage.put(new Blob(['órfão']).stream(), { maxBytes: 100 })).key;
    await store.age(orphan, 3600_000);
    await startUploadsUpkeep(api.db.prisma, api.app.deps.storage);
    expect(await store.has(orphan)).toBe(false);
    const runs = await pendingRuns();
    expect(runs).toHaveLength(1);
    expect(runs[0].delay_s).toBeLessThan(5);
  });
});
