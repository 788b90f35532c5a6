// The real server process (`npm start`) on a free port, with a bootstrap key and a fresh database: a
// temporary DATA_DIR on PGlite, or a new schema on PostgreSQL. For tests that need a socket: browsers,
// curl.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import pg from 'pg';
import { migratedDataDir } from './database.js';
import { POSTGRES_URL, testDatabaseKind } from './env.js';
import { generateApiKey } from '../../src/auth/keys.js';

export interface StartedServer {
  url: string;
  key: string;
  output(): string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

export async function startServer(env: Record<string, string> = {}): Promise<StartedServer> {
  const port = await freePort();
  const key = generateApiKey();
  const schema = testDatabaseKind() === 'postgres' ? `funil_test_${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}` : null;
  const dataDir = migratedDataDir('funil-server-');
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      PORT: String(port),
      DATA_DIR: dataDir,
      BOOTSTRAP_API_KEY: key,
      // Bursts from one key, past the default 1,200 a minute, are not what these tests measure.
      RATE_LIMIT_PER_MINUTE: '1000000',
      ...(schema ? { DATABASE_URL: `${POSTGRES_URL}?schema=${schema}` } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<void>((resolve) => proc.on('exit', () => resolve()));
  const deadline = Date.now() + 100_000;
  while (!/listening on/.test(out)) {
    if (proc.exitCode !== null) throw new Error(`server exited: ${out}`);
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`server did not start: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    key,
    output: () => out,
    async stop() {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      await exited;
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (schema) {
        const client = new pg.Client({ connectionString: POSTGRES_URL });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await client.end();
      }
    },
  };
}
