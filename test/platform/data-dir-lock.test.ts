// One process at a time on an embedded database: the CLI (or a second server) on the DATA_DIR of a
// running server is refused with a clear message instead of writing into files the server owns; a lock
// left by a killed process is taken over; closing releases it. With PostgreSQL the CLI works beside
// the server.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { DataDirInUseError, lockDataDir } from '../../src/db/pglite-lock.js';
import { migratedDataDir } from '../helpers/database.js';
import { POSTGRES_URL, testDatabaseKind } from '../helpers/env.js';
import { generateApiKey } from '../../src/auth/keys.js';

const run = promisify(execFile);
const KEY = generateApiKey();
const children: ChildProcess[] = [];
const schema = `funil_test_${Math.floor(Date.now() / 1000)}_lock${randomBytes(3).toString('hex')}`;

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  if (testDatabaseKind() !== 'postgres') return;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
});

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'funil-lock-'));

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

interface Server {
  proc: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

async function startServer(env: Record<string, string>, waitFor: RegExp | null = /listening on/): Promise<Server> {
  const port = await freePort();
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, NODE_ENV: 'development', LOG_LEVEL: 'warn', PORT: String(port), BOOTSTRAP_API_KEY: KEY, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(proc);
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + 60_000;
  while (waitFor && !waitFor.test(out)) {
    if (proc.exitCode !== null) throw new Error(`server exited: ${out}`);
    if (Date.now() > deadline) throw new Error(`server did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { proc, port, output: () => out, exited };
}

async function cli(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const failed = e as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

async function tagsStatus(port: number, key: string): Promise<number> {
  return (await fetch(`http://127.0.0.1:${port}/backend/tags`, { headers: { authorization: `Bearer ${key}` } })).status;
}

describe.runIf(testDatabaseKind() === 'pglite')('embedded database lock (real processes)', () => {
  it(
    'refuses the CLI and a second server while the server runs; takes over the lock of a killed server',
    { timeout: 180_000 },
    async () => {
      const env = { DATA_DIR: migratedDataDir('funil-lock-') };
      const server = await startServer(env);
      const lockFile = path.join(env.DATA_DIR, 'db.lock');
      expect(JSON.parse(fs.readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: server.proc.pid, since: expect.any(String) });

      const refused = await cli(env, 'create-tenant', '--name', 'Acme');
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toContain(`is in use by process ${server.proc.pid}`);
      expect(refused.stderr).toContain('stop the server before running the CLI');

      const second = await startServer(env, null);
      expect(await second.exited).toBe(1);
      expect(second.output()).toContain(`is in use by process ${server.proc.pid}`);
      expect(await tagsStatus(server.port, KEY)).toBe(200);

      server.proc.kill('SIGKILL');
      await server.exited;
      expect(fs.existsSync(lockFile)).toBe(true);
      const created = await cli(env, 'create-tenant', '--name', 'Acme');
      expect(created.stderr).toBe('');
      expect(created.code).toBe(0);
      const { api_key } = JSON.parse(created.stdout);
      expect(fs.existsSync(lockFile)).toBe(false);

      // Nothing the CLI wrote is lost: the restarted server knows its key; SIGTERM releases the lock.
      const restarted = await startServer(env);
      expect(await tagsStatus(restarted.port, api_key)).toBe(200);
      restarted.proc.kill('SIGTERM');
      expect(await restarted.exited).toBe(0);
      expect(fs.existsSync(lockFile)).toBe(false);
    },
  );

  it('creates nothing when its port is taken: no database, no organisation, no key', { timeout: 60_000 }, async () => {
    const dataDir = path.join(tempDir(), 'data');
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as net.AddressInfo).port;
      const failed = await run(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        env: { ...process.env, NODE_ENV: 'development', PORT: String(port), DATA_DIR: dataDir },
      }).then(
        () => ({ code: 0, stdout: '', stderr: '' }),
        (e: { code: number; stdout: string; stderr: string }) => e,
      );
      expect(failed.code).toBe(1);
      expect(failed.stderr).toContain(`Cannot listen on 127.0.0.1:${port} (EADDRINUSE): nothing was created`);
      expect(failed.stdout).not.toContain('fnl_');
      expect(fs.existsSync(dataDir)).toBe(false);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});

describe.runIf(testDatabaseKind() === 'postgres')('PostgreSQL needs no lock (real processes)', () => {
  it('runs the CLI while the server runs; the new key works at once', { timeout: 120_000 }, async () => {
    const env = { DATABASE_URL: `${POSTGRES_URL}?schema=${schema}`, DATA_DIR: tempDir() };
    const server = await startServer(env);
    const created = await cli(env, 'create-tenant', '--name', 'Acme');
    expect(created.code).toBe(0);
    expect(await tagsStatus(server.port, JSON.parse(created.stdout).api_key)).toBe(200);
    expect(fs.existsSync(path.join(env.DATA_DIR, 'db.lock'))).toBe(false);
    server.proc.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });
});

describe('lockDataDir', () => {
  const deadPid = async () => {
    const child = spawn(process.execPath, ['-e', '']);
    await new Promise((r) => child.on('exit', r));
    return child.pid!;
  };
  const writeLock = (dir: string, owner: Record<string, unknown>) => fs.writeFileSync(`${dir}.lock`, JSON.stringify(owner));

  it('is refused while held, in this process too, and free again after release', () => {
    const dir = path.join(tempDir(), 'db');
    const lock = lockDataDir(dir);
    expect(() => lockDataDir(dir)).toThrow(DataDirInUseError);
    lock.release();
    expect(fs.existsSync(`${dir}.lock`)).toBe(false);
    lockDataDir(dir).release();
  });

  it('refuses a lock whose owner is alive', () => {
    const dir = path.join(tempDir(), 'db');
    writeLock(dir, { pid: process.ppid, start: null, since: '2026-01-01T00:00:00.000Z' });
    expect(() => lockDataDir(dir)).toThrow(`in use by process ${process.ppid} (since 2026-01-01T00:00:00.000Z)`);
  });

  it('takes over a lock whose owner is gone, whose pid now names another process, or that is not a lock', async () => {
    const dir = path.join(tempDir(), 'db');
    const stale = [
      { pid: await deadPid(), start: null, since: 'x' },
      // The pid is alive, but started at another time: a reused pid.
      ...(fs.existsSync(`/proc/${process.ppid}/stat`) ? [{ pid: process.ppid, start: '1', since: 'x' }] : []),
      // This process's own pid without holding the lock: a previous life of a container's pid 1.
      { pid: process.pid, start: '1', since: 'x' },
    ];
    for (const owner of stale) {
      writeLock(dir, owner);
      const lock = lockDataDir(dir);
      expect(JSON.parse(fs.readFileSync(`${dir}.lock`, 'utf8')).pid).toBe(process.pid);
      lock.release();
    }
    fs.writeFileSync(`${dir}.lock`, 'garbage');
    lockDataDir(dir).release();
    expect(fs.readdirSync(path.dirname(dir))).toEqual([]);
  });

  it('leaves a lock another process took over alone when releasing', () => {
    const dir = path.join(tempDir(), 'db');
    const lock = lockDataDir(dir);
    writeLock(dir, { pid: process.ppid, start: null, since: 'x' });
    lock.release();
    expect(JSON.parse(fs.readFileSync(`${dir}.lock`, 'utf8')).pid).toBe(process.ppid);
  });
});
