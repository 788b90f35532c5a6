// dealChanged across server processes through Redis (REDIS_URL): a subscriber on process 1 receives a
// stage move made through process 2, with the deal card as the REST read shows it. On PostgreSQL two
// real server processes (`npm start`'s command) share one schema; PGlite is one process per data
// directory, so there two servers of this process share the database, each on its own socket.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/auth/keys.js';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { listen, type RunningServer } from '../../src/http/server.js';
import { ADMIN_TOKEN, useTestApp } from '../helpers/app.js';
import { POSTGRES_URL, testDatabaseKind } from '../helpers/env.js';
import { spawnServer } from '../helpers/server-process.js';
import { subscribeSse, type SseStream } from '../helpers/sse.js';
import { DEAL_CHANGED, type DealChangeEvent } from './live-queries.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const onPostgres = testDatabaseKind() === 'postgres';
const api = useTestApp();
const schema = `funil_test_${Math.floor(Date.now() / 1000)}_live${randomBytes(3).toString('hex')}`;
const streams: SseStream<unknown>[] = [];
const servers: RunningServer[] = [];

afterAll(async () => {
  await Promise.all(streams.map((s) => s.close()));
  await Promise.all(servers.map((s) => s.close()));
  if (!onPostgres) return;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
});

/** Two servers sharing the database and Redis, and a key of one organisation: their base URLs. */
async function twoServers(): Promise<{ one: string; two: string; key: string }> {
  if (onPostgres) {
    const key = generateApiKey();
    const env = { DATABASE_URL: `${POSTGRES_URL}?schema=${schema}`, REDIS_URL, BOOTSTRAP_API_KEY: key };
    const first = await spawnServer(env);
    await first.listening;
    const second = await spawnServer(env);
    await second.listening;
    return { one: `http://127.0.0.1:${first.port}`, two: `http://127.0.0.1:${second.port}`, key };
  }
  const org = await api.newOrg();
  const config = () =>
    loadConfig({ NODE_ENV: 'test', ADMIN_TOKEN, PUBLIC_BASE_URL: 'http://funil.test', REDIS_URL, PORT: '0', HOST: '127.0.0.1' });
  const [one, two] = await Promise.all(
    [0, 1].map(async () => {
      const cfg = config();
      const server = await listen(createApp(cfg, api.db), { ...cfg, port: 0, host: '127.0.0.1' });
      servers.push(server);
      return server.url;
    }),
  );
  return { one, two, key: org.key };
}

describe('dealChanged across processes', () => {
  it('a subscriber on process 1 receives a move made through process 2 (Redis)', async () => {
    const { one, two, key } = await twoServers();
    const call = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(`${two}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await r.text();
      expect(r.status, `${method} ${path}: ${text}`).toBeLessThan(300);
      return text ? JSON.parse(text) : undefined;
    };
    const pipeline = await call('POST', '/backend/pipelines', { name: 'Vendas', new_group_name: 'Comercial' });
    const [entrada, andamento] = pipeline.stages as { id: string }[];
    const lead = (await call('POST', '/backend/leads', { name: 'Ana', phone: '+5511977001122' })).data;
    const deal = await call('POST', '/backend/pipeline/deals', {
      pipeline_id: pipeline.id,
      stage_id: entrada.id,
      lead_id: lead.id,
      value: 50,
    });

    const stream = await subscribeSse<DealChangeEvent>(one, key, DEAL_CHANGED, { pipeline_id: pipeline.id });
    streams.push(stream);
    expect(stream.status).toBe(200);
    // Registered once an edit made through process 2 has crossed Redis to it.
    let n = 0;
    await stream.ready(
      () => call('PUT', `/backend/pipeline/deals/${deal.id}`, { note: `probe ${++n}` }),
      (e) => e.deal_id === deal.id,
    );

    await call('PUT', `/backend/pipeline/deals/${deal.id}/stage`, { stage_id: andamento.id });
    const moved = await stream.until((e) => e.kind === 'moved', 'the move');
    expect(moved).toMatchObject({ deal_id: deal.id, pipeline_id: pipeline.id, from_stage_id: entrada.id, to_stage_id: andamento.id });
    const read = await (await fetch(`${one}/backend/pipeline/deals/${deal.id}`, { headers: { authorization: `Bearer ${key}` } })).json();
    expect(moved.deal).toEqual(read);
    expect(moved.deal).toMatchObject({ stage_id: andamento.id, lead_name: 'Ana', value: 50 });
    expect(stream.errors).toEqual([]);
  });
});
