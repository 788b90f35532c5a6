// Real server processes (`node --import tsx --import ./src/observability/preload.ts src/main.ts`, what
// `npm start` execs) on free ports, for
// the tests about several processes. Every process started is killed after the file if still alive.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { afterAll } from 'vitest';

export interface ServerProcess {
  proc: ChildProcess;
  port: number;
  output(): string;
  exited: Promise<number | null>;
}

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Spawns the server now; `listening` resolves once it says it listens, and rejects if it exits first. */
export async function spawnServer(env: Record<string, string>): Promise<ServerProcess & { listening: Promise<void> }> {
  const port = await freePort();
  const proc = spawn(process.execPath, ['--import', 'tsx', '--import', './src/observability/preload.ts', 'src/main.ts'], {
    // The load tests send bursts from one key, past the default 1,200 a minute: not what they measure.
    // One SECRETS_KEY for every process of a run: processes on one PostgreSQL database read each other's secrets.
    env: {
      ...process.env,
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      PORT: String(port),
      RATE_LIMIT_PER_MINUTE: '1000000',
      SECRETS_KEY: 'funil-test-server-processes-secrets-key',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(proc);
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const listening = (async () => {
    const deadline = Date.now() + 90_000;
    while (!/listening on/.test(out)) {
      if (proc.exitCode !== null) throw new Error(`server exited with ${proc.exitCode}: ${out}`);
      if (Date.now() > deadline) throw new Error(`server did not start: ${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  listening.catch(() => {}); // observed by the caller
  return { proc, port, output: () => out, exited, listening };
}
