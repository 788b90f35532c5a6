// The start-up sweep: stored files without a record and partial files left by dead uploads, older than
// the grace period, are removed; recorded files, recent files and anything that is not a stored file
// stay. `npm start` runs it. On the run's store: a directory, or a bucket.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sweepOrphanFiles } from '../../src/domains/uploads/sweep.js';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { migratedDataDir } from '../helpers/database.js';
import { openTestStore, testStorageKind } from '../helpers/storage.js';
import { keyOf, PNG, upload, useUploadApp } from './helpers.js';
import { generateApiKey } from '../../src/auth/keys.js';

const { api, root, store } = useUploadApp();
const onDisk = testStorageKind() === 'disk';
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  fs.rmSync(root, { recursive: true, force: true });
});

const hourAgo = () => new Date(Date.now() - 3600_000);
const age = (file: string) => fs.utimesSync(file, hourAgo(), hourAgo());

describe('sweepOrphanFiles', () => {
  it('removes old files without a record and old partial files; keeps recorded, recent and foreign files', async () => {
    const org = await api.newOrg('Varredura');
    const storage = api.app.deps.storage;
    const recorded = keyOf((await upload(api, org.key)).file_url);
    const oldOrphan = (await storage.put(new Blob([PNG]).stream(), { maxBytes: 1000 })).key;
    const newOrphan = (await storage.put(new Blob([PNG]).stream(), { maxBytes: 1000 })).key;
    await store.age(recorded, 3600_000);
    await store.age(oldOrphan, 3600_000);
    // Not a stored file (wrong name for its place): the sweep only touches what storage wrote.
    const foreign = 'ab/cd/nota.txt';
    // Partial files of dead uploads: on disk only (s3rver keeps no listable multipart uploads).
    const stalePartial = path.join(root, '.partial', randomBytes(24).toString('hex'));
    const freshPartial = path.join(root, '.partial', randomBytes(24).toString('hex'));
    if (onDisk) {
      fs.writeFileSync(stalePartial, 'meio arquivo');
      fs.writeFileSync(freshPartial, 'meio arquivo');
      age(stalePartial);
      fs.mkdirSync(path.join(root, 'ab', 'cd'), { recursive: true });
      fs.writeFileSync(path.join(root, foreign), 'nota');
      age(path.join(root, foreign));
    } else {
      await store.s3!.client.send(new PutObjectCommand({ Bucket: store.s3!.bucket, Key: foreign, Body: 'nota' }));
      await store.age(foreign, 3600_000);
    }
    const partials = onDisk ? 1 : 0;

    expect(await sweepOrphanFiles(api.db.prisma, storage)).toEqual({ orphans: 1, partials });
    expect(await store.has(oldOrphan)).toBe(false);
    for (const kept of [recorded, newOrphan]) expect(await store.has(kept), kept).toBe(true);
    expect((await store.contents()).some((name) => name.endsWith('nota.txt'))).toBe(true);
    if (onDisk) {
      expect(fs.existsSync(stalePartial)).toBe(false);
      expect(fs.existsSync(freshPartial)).toBe(true);
    }
    // A zero grace period takes the recent orphan and partial too, never the recorded file.
    expect(await sweepOrphanFiles(api.db.prisma, storage, { graceMs: -1000 })).toEqual({ orphans: 1, partials });
    expect(await store.has(recorded)).toBe(true);
  });

  it('runs when the server starts', async () => {
    // A store of its own: with PGlite the server has a database of its own, where no file is recorded.
    const own = await openTestStore();
    const orphan = (await own.storage.put(new Blob([PNG]).stream(), { maxBytes: 1000 })).key;
    await own.age(orphan, 3600_000);
    const databaseUrl = (api.db as { url?: string }).url;
    const dataDir = migratedDataDir('funil-sweep-data-');
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: {
        ...process.env,
        ...own.env,
        NODE_ENV: 'development',
        LOG_LEVEL: 'info',
        PORT: String(port),
        BOOTSTRAP_API_KEY: generateApiKey(),
        ...(databaseUrl ? { DATABASE_URL: databaseUrl } : { DATA_DIR: dataDir }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    await expect.poll(() => output, { timeout: 90_000, interval: 200 }).toContain('storage sweep done');
    expect(await own.contents()).toEqual([]);
    expect(JSON.parse(output.split('\n').find((l) => l.includes('storage sweep done'))!)).toMatchObject({ orphans: 1, partials: 0 });
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    fs.rmSync(dataDir, { recursive: true, force: true });
    await own.close();
  }, 120_000);
});
