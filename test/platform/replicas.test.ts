// Several server processes on one PostgreSQL, as an operator runs them: started together on an empty
// schema (one organisation, one Owner, one key), and one stopped under keep-alive load behind a
// round-robin balancer (no request lost, /ready 503 first, exit code 0).
// PostgreSQL only: PGlite is one process per data directory (its lock refuses a second one).
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { MIGRATION_LOCK_KEY } from '../../src/db/migrate.js';
import { POSTGRES_URL, testDatabaseKind } from '../helpers/env.js';
import { spawnServer, type ServerProcess } from '../helpers/server-process.js';
import { generateApiKey } from '../../src/auth/keys.js';

const onPostgres = testDatabaseKind() === 'postgres';
const schemas: string[] = [];

afterAll(async () => {
  if (!schemas.length) return;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  for (const s of schemas) await client.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  await client.end();
});

function newSchema(): string {
  const schema = `funil_test_${Math.floor(Date.now() / 1000)}_rep${randomBytes(3).toString('hex')}`;
  schemas.push(schema);
  return schema;
}

async function inSchema<T>(schema: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, options: `-c search_path="${schema}"` });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function accounts(schema: string) {
  return inSchema(schema, async (c) => {
    const count = async (sql: string) => Number((await c.query(sql)).rows[0].n);
    return {
      organisations: await count('SELECT count(*) AS n FROM tenants'),
      owners: await count(`SELECT count(*) AS n FROM users WHERE role = 'owner'`),
      users: await count('SELECT count(*) AS n FROM users'),
      keys: await count('SELECT count(*) AS n FROM api_keys'),
    };
  });
}

/**
 * Starts `n` processes on `schema` and waits until every one listens. They are lined up first: the test
 * holds the migrations' advisory lock until all `n` wait for it, so they race from the same instant.
 */
async function startTogether(n: number, schema: string, env: Record<string, string> = {}): Promise<ServerProcess[]> {
  const name = `funil-replicas-${randomBytes(3).toString('hex')}`;
  const gate = new pg.Client({ connectionString: POSTGRES_URL });
  await gate.connect();
  try {
    await gate.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    const serverEnv = { DATABASE_URL: `${POSTGRES_URL}?schema=${schema}&application_name=${name}`, ...env };
    const servers = await Promise.all(Array.from({ length: n }, () => spawnServer(serverEnv)));
    const deadline = Date.now() + 90_000;
    for (;;) {
      const { rows } = await gate.query(
        `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a USING (pid)
         WHERE l.locktype = 'advisory' AND NOT l.granted AND a.application_name = $1`,
        [name],
      );
      if (rows[0].n === n) break;
      if (Date.now() > deadline) throw new Error(`only ${rows[0].n} of ${n} processes reached the migrations`);
      await Promise.race([new Promise((r) => setTimeout(r, 50)), ...servers.map((s) => s.listening)]);
    }
    await gate.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    await Promise.all(servers.map((s) => s.listening));
    return servers;
  } finally {
    await gate.end();
  }
}

async function stopAll(servers: ServerProcess[]) {
  for (const s of servers) s.proc.kill('SIGTERM');
  return Promise.all(servers.map((s) => s.exited));
}

async function status(port: number, path: string, key?: string): Promise<number> {
  const r = await fetch(`http://127.0.0.1:${port}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  await r.arrayBuffer();
  return r.status;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Answer {
  status: number;
  port: number;
  connection?: string;
  at: number;
}

/** A request that failed before any response: what a balancer may safely send to another process. */
const beforeResponse = (e: NodeJS.ErrnoException) => ['ECONNRESET', 'ECONNREFUSED', 'EPIPE'].includes(e.code ?? '');

/**
 * The balancer in front of the processes, on loopback: round robin over keep-alive connections among the
 * processes whose /ready answered 200 (probed every 100 ms on a new connection), and a request that
 * failed before any response is sent once more, to the other process.
 */
class Balancer {
  readonly agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  readonly probes = new Map<number, Array<{ outcome: number | string; at: number }>>();
  private readonly up = new Set<number>();
  private next = 0;
  private probing = true;

  constructor(
    private readonly ports: number[],
    private readonly key: string,
  ) {
    for (const p of ports) {
      this.up.add(p);
      this.probes.set(p, []);
      void this.probeLoop(p);
    }
  }

  /** One check at a time per process, so their outcomes come in order. */
  private async probeLoop(port: number) {
    while (this.probing) {
      await this.probe(port);
      await sleep(100);
    }
  }

  private async probe(port: number) {
    const outcome = await new Promise<number | string>((resolve) => {
      const req = http.get({ host: '127.0.0.1', port, path: '/ready', agent: false, timeout: 2_000 }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
      req.on('timeout', () => (req.destroy(), resolve('timeout')));
    });
    // A slow answer on this busy machine tells nothing; 503 or a refused connection takes it out.
    if (outcome === 'timeout') return;
    this.probes.get(port)!.push({ outcome, at: Date.now() });
    if (outcome === 200) this.up.add(port);
    else this.up.delete(port);
  }

  /** The next process in rotation, or for a retry the other one. */
  private pick(not?: number): number {
    const candidates = not === undefined ? this.ports.filter((p) => this.up.has(p)) : this.ports.filter((p) => p !== not);
    return candidates[this.next++ % candidates.length];
  }

  async send(path: string): Promise<Answer> {
    const port = this.pick();
    try {
      return await this.once(port, path);
    } catch (e) {
      if (!beforeResponse(e as NodeJS.ErrnoException)) throw e;
      return this.once(this.pick(port), path);
    }
  }

  private once(port: number, path: string): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = http.get(
        { host: '127.0.0.1', port, path, agent: this.agent, headers: { authorization: `Bearer ${this.key}` } },
        (res) => {
          res.on('data', () => {});
          res.on('end', () => resolve({ status: res.statusCode!, port, connection: res.headers.connection, at: Date.now() }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
    });
  }

  close() {
    this.probing = false;
    this.agent.destroy();
  }
}

/** A POST whose body arrives in two parts: the second when `finish` resolves. */
function slowPost(port: number, key: string, finish: Promise<unknown>) {
  const body = JSON.stringify({ name: `slow-${randomBytes(3).toString('hex')}`, color: '#abcdef' });
  return new Promise<{ status: number; connection?: string }>((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/backend/tags',
        method: 'POST',
        agent: false,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
      },
    );
    req.on('error', reject);
    req.write(body.slice(0, 10));
    void finish.then(() => req.end(body.slice(10)));
  });
}

/** A keep-alive connection that has served one request and stays open, idle; `closed` when the server closes it. */
async function idleKeepAlive(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('error', () => {});
  let received = '';
  await new Promise<void>((resolve) => {
    socket.on('data', (d) => {
      received += d.toString();
      if (received.includes('\r\n\r\n') && received.includes('"ok"')) resolve();
    });
    socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n');
  });
  return { closed };
}

function connects(port: number): Promise<boolean | string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => (socket.destroy(), resolve(true)));
    socket.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? false));
  });
}

describe.skipIf(!onPostgres)('several processes on one PostgreSQL (PostgreSQL only: PGlite is one process per data directory)', () => {
  it('started together on an empty schema: one organisation, one Owner, one key, printed once', { timeout: 240_000 }, async () => {
    const schema = newSchema();
    await inSchema('public', (c) => c.query(`CREATE SCHEMA "${schema}"`)); // created beforehand, empty
    const servers = await startTogether(3, schema);
    expect(await accounts(schema)).toEqual({ organisations: 1, owners: 1, users: 1, keys: 1 });
    const printed = servers.map((s) => /Owner API key.*\n\n\s+(\S+)/.exec(s.output())?.[1]).filter(Boolean) as string[];
    expect(printed).toHaveLength(1);
    for (const s of servers) expect(await status(s.port, '/backend/users', printed[0])).toBe(200);
    expect(await stopAll(servers)).toEqual([0, 0, 0]);
  });

  it(
    'started together with BOOTSTRAP_API_KEY on a schema that does not exist yet: all start, the key works on each',
    { timeout: 240_000 },
    async () => {
      const schema = newSchema();
      const key = generateApiKey();
      const servers = await startTogether(3, schema, { BOOTSTRAP_API_KEY: key });
      expect(await accounts(schema)).toEqual({ organisations: 1, owners: 1, users: 1, keys: 1 });
      for (const s of servers) expect(await status(s.port, '/backend/users', key)).toBe(200);
      expect(await stopAll(servers)).toEqual([0, 0, 0]);
    },
  );

  it(
    'one of two stopped with SIGTERM under keep-alive load: no request lost, /ready 503 first, exit code 0',
    { timeout: 240_000 },
    async () => {
      const schema = newSchema();
      const key = generateApiKey();
      const url = `${POSTGRES_URL}?schema=${schema}`;
      // One after the other: the first start creates the schema and the organisation.
      const stopped = await spawnServer({ DATABASE_URL: url, BOOTSTRAP_API_KEY: key, SHUTDOWN_DELAY_MS: '1000' });
      await stopped.listening;
      const kept = await spawnServer({ DATABASE_URL: url, BOOTSTRAP_API_KEY: key });
      await kept.listening;

      const balancer = new Balancer([stopped.port, kept.port], key);
      const answers: Answer[] = [];
      const failures: string[] = [];
      let loading = true;
      const load = Array.from({ length: 8 }, async (_, i) => {
        while (loading) {
          try {
            answers.push(await balancer.send(i % 2 ? '/backend/tags' : '/backend/users'));
          } catch (e) {
            failures.push(String((e as Error).message));
          }
        }
      });

      await sleep(1_500);
      // A keep-alive connection left idle, and a request whose body is still arriving when the stop begins.
      const idle = await idleKeepAlive(stopped.port);
      let finishBody!: () => void;
      const inFlight = slowPost(stopped.port, key, new Promise<void>((r) => (finishBody = r)));
      await sleep(200);
      const sigterm = Date.now();
      stopped.proc.kill('SIGTERM');
      // The listener closes after SHUTDOWN_DELAY_MS, while the request above is still under way.
      const deadline = Date.now() + 15_000;
      while ((await connects(stopped.port)) !== 'ECONNREFUSED') {
        if (Date.now() > deadline) throw new Error('the stopping process still accepts connections');
        await sleep(50);
      }
      const idleClosed = await Promise.race([idle.closed.then(() => true), sleep(0).then(() => false)]);
      finishBody();
      const slow = await inFlight;
      const code = await stopped.exited;
      const exitedAt = Date.now();
      await sleep(1_000);
      loading = false;
      await Promise.all(load);
      balancer.close();

      expect(failures).toEqual([]);
      expect(answers.filter((a) => a.status !== 200)).toEqual([]);
      expect(code).toBe(0);
      expect(exitedAt - sigterm).toBeLessThan(15_000);
      // Idle keep-alive connections were closed; the request under way was answered, with Connection: close.
      expect(idleClosed).toBe(true);
      expect(slow).toEqual({ status: 201, connection: 'close' });
      // /ready went 503 before the process refused connections, and never 200 again.
      const probes = balancer.probes.get(stopped.port)!.filter((p) => p.at > sigterm);
      const off = probes.findIndex((p) => p.outcome !== 200);
      expect(probes[off].outcome).toBe(503);
      expect(probes.slice(off).map((p) => p.outcome)).not.toContain(200);
      expect(probes.map((p) => p.outcome)).toContain('ECONNREFUSED');
      // Responses on the load's keep-alive connections told the balancer those connections close.
      expect(answers.filter((a) => a.port === stopped.port && a.connection === 'close').length).toBeGreaterThan(0);
      // Both processes carried the load before; the other one alone after.
      expect(answers.filter((a) => a.at < sigterm && a.port === stopped.port).length).toBeGreaterThan(0);
      expect(answers.filter((a) => a.at > exitedAt && a.port === kept.port).length).toBeGreaterThan(0);
      kept.proc.kill('SIGTERM');
      expect(await kept.exited).toBe(0);
    },
  );
});
