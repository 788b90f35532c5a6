// The real server process (`node --import tsx src/main.ts`) delivering webhooks. A server killed with
// SIGKILL while deliveries are pending loses none: after a restart every committed event reaches the
// receiver. Two server processes on one PostgreSQL deliver each attempt once.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { serverDatabase } from '../helpers/database.js';
import { testDatabaseKind } from '../helpers/env.js';
import { nextPhone } from '../helpers/factories.js';
import { receiver, sleep, waitFor, type Receiver } from './helpers.js';
import { generateApiKey } from '../../src/auth/keys.js';

const KEY = generateApiKey();
const children: ChildProcess[] = [];
const cleanup: Array<() => Promise<void>> = [];

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  for (const step of cleanup.reverse()) await step();
});

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
  base: string;
  exited: Promise<number | null>;
  output: () => string;
}

async function startServer(env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      PORT: String(port),
      BOOTSTRAP_API_KEY: KEY,
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(proc);
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + 60_000;
  while (!/listening on/.test(out)) {
    if (proc.exitCode !== null) throw new Error(`server exited: ${out}`);
    if (Date.now() > deadline) throw new Error(`server did not start: ${out}`);
    await sleep(100);
  }
  return { proc, base: `http://127.0.0.1:${port}`, exited, output: () => out };
}

async function call(server: Server, method: string, pathname: string, body?: unknown) {
  const r = await fetch(server.base + pathname, {
    method,
    headers: { authorization: `Bearer ${KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined };
}

async function createLeads(server: Server, names: string[]) {
  for (const name of names) {
    const r = await call(server, 'POST', '/backend/leads', { name, phone: nextPhone() });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  }
}

/** The lead names a receiver got, by webhook-id (de-duplicated). */
const namesById = (hook: Receiver) => new Map(hook.hits.map((h) => [String(h.headers['webhook-id']), h.json.data.name as string]));

describe('server processes', () => {
  it(
    'a server killed with SIGKILL while deliveries are pending delivers every committed event after a restart',
    { timeout: 180_000 },
    async () => {
      const env = { ...serverDatabase('hooks', cleanup), WEBHOOK_RETRY_SCHEDULE: '0,3000,3000,3000,3000,3000,3000,3000,3000,3000' };
      const port = await freePort(); // the receiver is down: nothing listens here yet
      let server = await startServer(env);
      const hook = await call(server, 'POST', '/backend/webhooks', { url: `http://127.0.0.1:${port}/hook`, events: ['lead.created'] });
      expect(hook.status).toBe(201);

      // Failed first attempts, waiting for their retry…
      const failing = Array.from({ length: 8 }, (_, i) => `failing ${i}`);
      await createLeads(server, failing);
      await waitFor(async () => {
        const log = await call(server, 'GET', `/backend/webhooks/${hook.body.data.id}/deliveries?limit=100`);
        expect(new Set(log.body.data.map((d: any) => d.event_id)).size).toBe(failing.length);
      }, 30_000);
      // …and changes committed just before the kill, whose fan-out may not have run.
      const late = Array.from({ length: 4 }, (_, i) => `late ${i}`);
      await createLeads(server, late);
      server.proc.kill('SIGKILL');
      expect(await server.exited).toBeNull();

      const up = await receiver(undefined, { port });
      server = await startServer(env);
      const expected = [...failing, ...late].sort();
      await waitFor(() => expect([...namesById(up).values()].sort()).toEqual(expected), 120_000);
      await sleep(1_000);
      // De-duplicated by webhook-id: one message per event, none lost.
      expect(new Set(up.hits.map((h) => h.headers['webhook-id'])).size).toBe(expected.length);
      server.proc.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    },
  );

  it.runIf(testDatabaseKind() === 'postgres')(
    'two server processes on one PostgreSQL deliver each attempt once',
    { timeout: 180_000 },
    async () => {
      const env = { ...serverDatabase('hooks', cleanup), WEBHOOK_RETRY_SCHEDULE: '0,300,300' };
      // Every third message fails its first attempt, so retries run across both processes too.
      const seen = new Map<string, number>();
      const hook = await receiver((hit, res) => {
        const id = String(hit.headers['webhook-id']);
        const n = (seen.get(id) ?? 0) + 1;
        seen.set(id, n);
        const failsOnce = Number(hit.json.data.name.split(' ')[1]) % 3 === 0;
        res.writeHead(failsOnce && n === 1 ? 500 : 204).end();
      });
      const a = await startServer(env);
      const b = await startServer(env);
      const webhook = await call(a, 'POST', '/backend/webhooks', { url: hook.url, events: ['lead.created'] });
      expect(webhook.status).toBe(201);

      const names = Array.from({ length: 30 }, (_, i) => `lead ${i}`);
      await Promise.all([
        createLeads(
          a,
          names.filter((_, i) => i % 2 === 0),
        ),
        createLeads(
          b,
          names.filter((_, i) => i % 2 === 1),
        ),
      ]);
      // Each message arrives once, or twice when its first attempt failed: no attempt is sent twice.
      const expectedCount = (name: string) => (Number(name.split(' ')[1]) % 3 === 0 ? 2 : 1);
      const counts = () => {
        const byName = new Map<string, number>();
        for (const h of hook.hits) byName.set(h.json.data.name, (byName.get(h.json.data.name) ?? 0) + 1);
        return names.map((name) => [name, byName.get(name) ?? 0]);
      };
      const expected = names.map((name) => [name, expectedCount(name)]);
      await waitFor(() => expect(counts()).toEqual(expected), 60_000);
      await sleep(1_500);
      expect(counts()).toEqual(expected);
      expect(namesById(hook).size).toBe(names.length);
      const log = await call(a, 'GET', `/backend/webhooks/${webhook.body.data.id}/deliveries?limit=100`);
      expect(log.body.pagination.total).toBe(hook.hits.length);
      const attempts = new Map<string, number[]>();
      for (const d of log.body.data) attempts.set(d.event_id, [...(attempts.get(d.event_id) ?? []), d.attempt].sort());
      expect([...attempts.values()].every((list) => list.join() === '1' || list.join() === '1,2')).toBe(true);

      a.proc.kill('SIGTERM');
      b.proc.kill('SIGTERM');
      expect(await a.exited).toBe(0);
      expect(await b.exited).toBe(0);
    },
  );
});
