// The start-up sweep: stored files without a record and partial files left by dead uploads, older than
// the grace period, are removed; recorded files, recent files and anything that is not a stored file
// stay. `npm start` runs it.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sweepOrphanFiles } from '../../src/domains/uploads/sweep.js';
import { createDirectoryStorage } from '../../src/storage/disk-storage.js';
import { keyOf, pathOfKey, PNG, storedFiles, upload, useUploadApp } from './helpers.js';
import { generateApiKey } from '../../src/auth/keys.js';

const { api, root } = useUploadApp();
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
    age(pathOfKey(root, recorded));
    age(pathOfKey(root, oldOrphan));
    const stalePartial = path.join(root, '.partial', randomBytes(24).toString('hex'));
    const freshPartial = path.join(root, '.partial', randomBytes(24).toString('hex'));
    fs.writeFileSync(stalePartial, 'meio arquivo');
    fs.writeFileSync(freshPartial, 'meio arquivo');
    age(stalePartial);
    // Not a stored file (wrong name for its directory): the sweep only touches what storage wrote.
    const foreign = path.join(root, 'ab', 'cd', 'nota.txt');
    fs.mkdirSync(path.dirname(foreign), { recursive: true });
    fs.writeFileSync(foreign, 'nota');
    age(foreign);

    expect(await sweepOrphanFiles(api.db.prisma, storage)).toEqual({ orphans: 1, partials: 1 });
    expect(fs.existsSync(pathOfKey(root, oldOrphan))).toBe(false);
    expect(fs.existsSync(stalePartial)).toBe(false);
    for (const kept of [pathOfKey(root, recorded), pathOfKey(root, newOrphan), freshPartial, foreign]) expect(fs.existsSync(kept), kept).toBe(true);
    // A zero grace period takes the recent orphan and partial too, never the recorded file.
    expect(await sweepOrphanFiles(api.db.prisma, storage, { graceMs: -1000 })).toEqual({ orphans: 1, partials: 1 });
    expect(fs.existsSync(pathOfKey(root, recorded))).toBe(true);
  });

  it('runs when the server starts', async () => {
    const storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'funil-sweep-start-'));
    const orphan = (await createDirectoryStorage(storageDir).put(new Blob([PNG]).stream(), { maxBytes: 1000 })).key;
    age(pathOfKey(storageDir, orphan));
    const databaseUrl = (api.db as { url?: string }).url;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'funil-sweep-data-'));
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: {
        ...process.env,
        NODE_ENV: 'development',
        LOG_LEVEL: 'info',
        PORT: String(port),
        STORAGE_DIR: storageDir,
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
    expect(storedFiles(storageDir)).toEqual([]);
    expect(JSON.parse(output.split('\n').find((l) => l.includes('storage sweep done'))!)).toMatchObject({ orphans: 1, partials: 0 });
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    for (const dir of [storageDir, dataDir]) fs.rmSync(dir, { recursive: true, force: true });
  }, 120_000);
});
