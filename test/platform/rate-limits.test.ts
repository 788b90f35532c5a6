// Rate limits: a budget per API key (RATE_LIMIT_PER_MINUTE, 5 here), one per organisation (all its keys
// together), and one of failed authentications per client address (30 a minute); RateLimit-* headers on every /backend
// and /graphql answer; 429 with Retry-After in the route's shape; with REDIS_URL two server processes
// (here two apps) share one budget; the address comes from the connection on a real server.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { listen } from '../../src/http/server.js';
import { ADMIN_TOKEN, useTestApp } from '../helpers/app.js';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const api = useTestApp({ RATE_LIMIT_PER_MINUTE: '5', METRICS_TOKEN });
const BASE = 'http://funil.test';
const opened: { close(): unknown }[] = [];
afterAll(async () => {
  for (const o of opened) await o.close();
});

function call(path: string, key: string | null, options: { address?: string; app?: { fetch: typeof api.app.fetch }; body?: unknown } = {}) {
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  const init: RequestInit = options.body
    ? { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(options.body) }
    : { headers };
  return (options.app ?? api.app).fetch(new Request(BASE + path, init), { address: options.address });
}

const limits = (r: Response) => ({
  limit: r.headers.get('ratelimit-limit'),
  remaining: r.headers.get('ratelimit-remaining'),
  reset: Number(r.headers.get('ratelimit-reset')),
});

describe('per API key', () => {
  it('counts each request in RateLimit-*, then answers 429 with Retry-After in every shape', async () => {
    const org = await api.newOrg();
    for (let i = 4; i >= 0; i--) {
      const r = await call('/backend/pipelines', org.key);
      expect(r.status).toBe(200);
      expect(limits(r)).toEqual({ limit: '5', remaining: String(i), reset: expect.any(Number) });
      expect(limits(r).reset).toBeGreaterThanOrEqual(1);
      expect(limits(r).reset).toBeLessThanOrEqual(60);
    }
    const bare = await call('/backend/pipelines', org.key);
    expect(bare.status).toBe(429);
    expect(Number(bare.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limits(bare)).toMatchObject({ limit: '5', remaining: '0' });
    expect(await bare.json()).toMatchObject({ code: 'ERR_RATE_LIMITED', message: expect.any(String) });
    const envelope = await call('/backend/leads', org.key);
    expect(envelope.status).toBe(429);
    expect(await envelope.json()).toMatchObject({ success: false, error: { code: 'RATE_LIMITED', message: expect.any(String) } });
    const graphql = await call('/graphql', org.key, { body: { query: '{ viewer { user { id } } }' } });
    expect(graphql.status).toBe(429);
    expect(graphql.headers.get('retry-after')).toBeTruthy();
    expect((await graphql.json()).errors[0].extensions).toMatchObject({ code: 'RATE_LIMITED', status: 429 });

    // Another key of the same organisation has its own budget.
    const other = await api.newOrg();
    expect((await call('/backend/pipelines', other.key)).status).toBe(200);

    // The three refusals are counted for /metrics.
    const metrics = await api.app.fetch(new Request(BASE + '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }));
    expect(await metrics.text()).toMatch(/^funil_rate_limit_refusals_total\{limit="api_key"\} 3$/m);
  });

  it('with REDIS_URL, two server processes share one budget', async () => {
    const config = loadConfig({ NODE_ENV: 'test', ADMIN_TOKEN, RATE_LIMIT_PER_MINUTE: '5', REDIS_URL: 'redis://127.0.0.1:6379' });
    const first = createApp(config, api.db);
    const second = createApp({ ...config }, api.db);
    opened.push(first, second);
    const org = await api.newOrg();
    // Until its Redis connection is up, a process counts in memory (it never queues commands).
    await new Promise((resolve) => setTimeout(resolve, 500));
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await call('/backend/tags', org.key, { app: i % 2 ? second : first })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    // In memory, each process counts alone.
    const alone = createApp(loadConfig({ NODE_ENV: 'test', RATE_LIMIT_PER_MINUTE: '5' }), api.db);
    expect((await call('/backend/tags', org.key, { app: alone })).status).toBe(200);
  });
});

describe('per organisation', () => {
  it('counts every key of an organisation against one budget: minting keys does not multiply it', async () => {
    // Keys made through the suite's app; counted by an app whose organisations have 8 requests a minute.
    const app = createApp(
      loadConfig({ NODE_ENV: 'test', RATE_LIMIT_PER_MINUTE: '5', RATE_LIMIT_PER_ORGANISATION_PER_MINUTE: '8' }),
      api.db,
    );
    opened.push(app);
    const org = await api.newOrg();
    const [first, second] = [await api.keyFor(org, 'admin'), await api.keyFor(org, 'operator')];
    const statuses: number[] = [];
    const remaining: (string | null)[] = [];
    for (const key of [first, first, first, first, first, second, second, second, second]) {
      const r = await call('/backend/tags', key, { app });
      statuses.push(r.status);
      remaining.push(r.headers.get('ratelimit-remaining'));
      if (r.status === 429) {
        expect(await r.json()).toMatchObject({
          success: false,
          error: { code: 'RATE_LIMITED', message: expect.stringContaining('organiza') },
        });
        expect(limits(r)).toMatchObject({ limit: '8', remaining: '0' });
      }
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 429]);
    // The headers tell the budget with less left: the key's first, the organisation's once it is lower.
    expect(remaining.slice(0, 8)).toEqual(['4', '3', '2', '1', '0', '2', '1', '0']);
    // Another organisation has its own budget.
    expect((await call('/backend/tags', (await api.newOrg()).key, { app })).status).toBe(200);
  });
});

describe('failed authentications per address', () => {
  it('answer 401 thirty times a minute, then 429; valid keys from that address and other addresses are still answered', async () => {
    const org = await api.newOrg();
    const address = '203.0.113.7';
    for (let i = 29; i >= 0; i--) {
      const r = await call('/backend/leads', `fnl_wrong${i}`, { address });
      expect(r.status).toBe(401);
      expect(limits(r)).toMatchObject({ limit: '30', remaining: String(i) });
    }
    const over = await call('/backend/leads', 'fnl_wrong', { address });
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).toBeTruthy();
    expect(await over.json()).toMatchObject({ success: false, error: { code: 'RATE_LIMITED' } });
    expect((await call('/backend/pipelines', null, { address })).status).toBe(429);
    const graphql = await call('/graphql', null, { address, body: { query: '{ viewer { user { id } } }' } });
    expect((await graphql.json()).errors[0].extensions.code).toBe('RATE_LIMITED');

    const valid = await call('/backend/leads', org.key, { address });
    expect(valid.status).toBe(200);
    expect(limits(valid)).toMatchObject({ limit: '5', remaining: '4' });
    expect((await call('/backend/leads', 'fnl_wrong', { address: '203.0.113.8' })).status).toBe(401);
  });

  it('a wrong admin token counts too (the platform area still answers 404 until the limit)', async () => {
    const address = '203.0.113.9';
    for (let i = 0; i < 30; i++)
      expect((await call('/backend/admin/tenants', 'wrong-admin-token', { address, body: { name: 'x' } })).status).toBe(404);
    expect((await call('/backend/admin/tenants', 'wrong-admin-token', { address, body: { name: 'x' } })).status).toBe(429);
    expect((await call('/backend/admin/tenants', ADMIN_TOKEN, { address, body: { name: 'x' } })).status).toBe(201);
  });

  it('on a real server, the address is the connection’s (or the last X-Forwarded-For entry behind TRUST_PROXY)', async () => {
    const config = loadConfig({ NODE_ENV: 'test', HOST: '127.0.0.1', PORT: '0' });
    const server = await listen(createApp(config, api.db), config);
    opened.push(server);
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++)
      statuses.push((await fetch(`${server.url}/backend/tags`, { headers: { authorization: 'Bearer fnl_x' } })).status);
    expect(statuses).toEqual([...Array(30).fill(401), 429]);

    const proxied = createApp(loadConfig({ NODE_ENV: 'test', TRUST_PROXY: 'true' }), api.db);
    const from = (address: string) =>
      proxied.fetch(
        new Request(`${BASE}/backend/tags`, { headers: { authorization: 'Bearer fnl_x', 'x-forwarded-for': `10.0.0.1, ${address}` } }),
        { address: '127.0.0.1' },
      );
    const client = `198.51.100.${randomBytes(1)[0]}`;
    for (let i = 0; i < 30; i++) expect((await from(client)).status).toBe(401);
    expect((await from(client)).status).toBe(429);
    expect((await from('198.51.100.250')).status).toBe(401);
  });
});

describe('RateLimit-* headers', () => {
  it('are on every /backend and /graphql answer, including those that take no key', async () => {
    const org = await api.newOrg();
    for (const [path, key] of [
      ['/backend/openapi.json', null],
      ['/backend/nowhere', null],
      ['/backend/tags', null],
      ['/graphql', org.key],
    ] as const) {
      const r = await call(path, key, path === '/graphql' ? { body: { query: '{ __typename }' } } : {});
      expect(r.headers.get('ratelimit-limit'), path).toMatch(/^\d+$/);
      expect(r.headers.get('ratelimit-remaining'), path).toMatch(/^\d+$/);
      expect(r.headers.get('ratelimit-reset'), path).toMatch(/^\d+$/);
    }
    expect((await api.raw('/health')).headers.get('ratelimit-limit')).toBeNull();
  });
});
