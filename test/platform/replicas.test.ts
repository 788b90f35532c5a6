// Several server processes on one PostgreSQL, as an operator runs them: started together on an empty
// schema (one organisation, one Owner, one key), and one stopped under keep-alive load behind a
// round-robin balancer (no request lost, /ready 503 first, exit code 0).
// PostgreSQL only: PGlite is one process per data directory (its lock refuses a second one).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { POSTGRES_URL, testDatabaseKind } from '../helpers/env.js';
import { spawnServer, type ServerProcess } from '../helpers/server-process.js';

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

const MIGRATION_LOCK = 72_110_001; // src/db/migrate.ts

/**
 * Starts `n` processes on `schema` and waits until every one listens. They are lined up first: the test
 * holds the migrations' advisory lock until all `n` wait for it, so they race from the same instant.
 */
async function startTogether(n: number, schema: string, env: Record<string, string> = {}): Promise<ServerProcess[]> {
  const name = `funil-replicas-${randomBytes(3).toString('hex')}`;
  const gate = new pg.Client({ connectionString: POSTGRES_URL });
  await gate.connect();
  try {
    await gate.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const env_ = { DATABASE_URL: `${POSTGRES_URL}?schema=${schema}&application_name=${name}`, ...env };
    const servers = await Promise.all(Array.from({ length: n }, () => spawnServer(env_)));
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
    await gate.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
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

  it('started together with BOOTSTRAP_API_KEY on a schema that does not exist yet: all start, the key works on each', { timeout: 240_000 }, async () => {
    const schema = newSchema();
    const key = 'replicas-bootstrap-key-0123456789';
    const servers = await startTogether(3, schema, { BOOTSTRAP_API_KEY: key });
    expect(await accounts(schema)).toEqual({ organisations: 1, owners: 1, users: 1, keys: 1 });
    for (const s of servers) expect(await status(s.port, '/backend/users', key)).toBe(200);
    expect(await stopAll(servers)).toEqual([0, 0, 0]);
  });
});
