// A PostgreSQL server of a test's own (initdb and pg_ctl from the machine's PostgreSQL, as the postgres
// user when the tests run as root), on a free port, for the fault tests that stop and start it. Removed
// after the file.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { freePort } from './server-process.js';

const BIN = (() => {
  const root = '/usr/lib/postgresql';
  const version = fs.existsSync(root) ? fs.readdirSync(root).sort().pop() : undefined;
  return version ? path.join(root, version, 'bin') : undefined;
})();

/** Whether this machine can run a private server (the tests that need one are skipped otherwise). */
export const privatePostgresAvailable = Boolean(BIN && fs.existsSync(path.join(BIN, 'pg_ctl')));

export interface PrivatePostgres {
  url: string;
  stop(): void;
  start(): void;
}

const servers: PrivatePostgres[] = [];
afterAll(() => {
  for (const s of servers) s.stop();
});

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'funil-pg-'));
  const data = path.join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) execFileSync('chown', ['postgres', dir]);
  const run = (tool: string, args: string[]) =>
    asRoot
      ? execFileSync('runuser', ['-u', 'postgres', '--', path.join(BIN!, tool), ...args], { stdio: 'pipe' })
      : execFileSync(path.join(BIN!, tool), args, { stdio: 'pipe' });
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  let running = false;
  const server: PrivatePostgres = {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    start() {
      run('pg_ctl', ['-D', data, '-o', options, '-w', '-l', path.join(dir, 'log'), 'start']);
      running = true;
    },
    stop() {
      if (!running) return;
      run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      running = false;
    },
  };
  servers.push(server);
  server.start();
  return server;
}
