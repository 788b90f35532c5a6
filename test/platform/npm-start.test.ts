// `npm start` as a container runs it: SIGTERM goes to the npm process alone (what `docker stop` does to
// PID 1), and the server must stop gracefully with it, leaving no process behind and the port closed.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { POSTGRES_URL, testDatabaseKind } from '../helpers/env.js';
import { generateApiKey } from '../../src/auth/keys.js';

const schema = `funil_test_${Math.floor(Date.now() / 1000)}_npm${randomBytes(3).toString('hex')}`;
const started: number[] = [];

afterAll(async () => {
  for (const pid of started) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  if (testDatabaseKind() !== 'postgres') return;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Every process below `pid`, from /proc (field 4 of /proc/<pid>/stat is the parent). */
function descendants(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const [child, p] of parentOf) {
      if (p !== parent) continue;
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

describe.runIf(fs.existsSync('/proc'))('npm start', () => {
  it('stops gracefully on SIGTERM to the npm process: exit 0, no process left, port closed', { timeout: 120_000 }, async () => {
    const port = await freePort();
    const database =
      testDatabaseKind() === 'postgres'
        ? { DATABASE_URL: `${POSTGRES_URL}?schema=${schema}` }
        : { DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'funil-npm-')) };
    const npm = spawn('npm', ['start', '--silent'], {
      env: {
        ...process.env,
        NODE_ENV: 'development',
        LOG_LEVEL: 'info',
        PORT: String(port),
        BOOTSTRAP_API_KEY: generateApiKey(),
        ...database,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    started.push(npm.pid!);
    let out = '';
    npm.stdout!.on('data', (d) => (out += d));
    npm.stderr!.on('data', (d) => (out += d));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      npm.on('exit', (code, signal) => resolve({ code, signal })),
    );
    const deadline = Date.now() + 90_000;
    while (!/listening on/.test(out)) {
      if (npm.exitCode !== null) throw new Error(`npm start exited: ${out}`);
      if (Date.now() > deadline) throw new Error(`npm start did not start: ${out}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await portOpen(port)).toBe(true);
    const tree = descendants(npm.pid!);
    started.push(...tree);
    expect(tree.length).toBeGreaterThan(0);

    npm.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(out).toMatch(/"msg":"shutting down","signal":"SIGTERM"/);
    // A child that loses its parent (esbuild's service under tsx) ends on its own within moments.
    await vi.waitFor(() => expect(tree.filter(isAlive)).toEqual([]), { timeout: 2_000, interval: 50 });
    expect(await portOpen(port)).toBe(false);
  });
});
