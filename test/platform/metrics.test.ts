// GET /metrics: guarded by METRICS_TOKEN (404 otherwise, like a path that does not exist), Prometheus
// text whose labels stay bounded (route templates, capped operation names), and the gauges and counters
// fed by the database pool, the job queues, webhook deliveries and knowledge extractions.
import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { extractionSlots } from '../../src/domains/knowledge/extract/index.js';
import { ADMIN_TOKEN } from '../helpers/app.js';
import { form } from '../knowledge/helpers.js';
import { makeWebhook, receiver, useWebhookApp, waitFor } from '../webhooks/helpers.js';

const TOKEN = 'metrics-token-0123456789abcdef';
const api = useWebhookApp({ METRICS_TOKEN: TOKEN });

async function scrape(authorization: string | null = `Bearer ${TOKEN}`) {
  const response = await api.raw('/metrics', { headers: authorization === null ? {} : { authorization } });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

/** The value of one sample, by metric name and exact labels (in any order); undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const found = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.keys(labels).length === Object.keys(found).length && Object.entries(labels).every(([k, v]) => found[k] === v))
      return Number(m[3]);
  }
  return undefined;
}

describe('GET /metrics', () => {
  it('answers only with the token: 404, as an unknown path, without it, with a wrong one, or when METRICS_TOKEN is unset', async () => {
    const unknown = await api.raw('/no-such-path');
    const notFound = { status: 404, text: await unknown.text() };
    for (const authorization of [null, 'Bearer wrong', `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, TOKEN, `Basic ${TOKEN}`]) {
      expect(await scrape(authorization), String(authorization)).toMatchObject(notFound);
    }
    const post = await api.raw('/metrics', { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(post.status).toBe(404);
    // The same database, no METRICS_TOKEN: the right header opens nothing.
    const without = createApp(loadConfig({ NODE_ENV: 'test', ADMIN_TOKEN }), api.db);
    expect((await without.fetch(new Request('http://funil.test/metrics', { headers: { authorization: `Bearer ${TOKEN}` } }))).status).toBe(
      404,
    );

    const ok = await scrape();
    expect(ok.status).toBe(200);
    expect(ok.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(ok.text).toContain('# TYPE funil_http_request_duration_seconds histogram');
    expect(ok.text).toContain('process_cpu_user_seconds_total');
  });

  it('labels HTTP requests with the route template, never the path with its ids; unknown paths are "other"', async () => {
    const org = await api.newOrg();
    const id = randomUUID();
    const count = (text: string, route: string, method: string, status: string) =>
      sample(text, 'funil_http_request_duration_seconds_count', { route, method, status }) ?? 0;
    const before = (await scrape()).text;
    expect((await api.rest('GET', `/backend/leads/${id}`, { key: org.key })).status).toBe(404);
    expect((await api.rest('GET', '/backend/leads', { key: org.key })).status).toBe(200);
    await api.raw(`/media/proxy/${id}/x.png`);
    await api.raw(`/nothing/${id}`);
    await api.raw(`/backend/nothing/${id}`, { headers: { authorization: `Bearer ${org.key}` } });
    const { text } = await scrape();
    expect(text).not.toContain(id);
    const added = (route: string, method: string, status: string) =>
      count(text, route, method, status) - count(before, route, method, status);
    expect(added('/backend/leads/:id', 'GET', '404')).toBe(1);
    expect(added('/backend/leads', 'GET', '200')).toBe(1);
    expect(added('/media/proxy/*', 'GET', '404')).toBe(1);
    expect(added('other', 'GET', '404')).toBe(2);
    expect(added('/metrics', 'GET', '200')).toBe(1); // the scrape before
    expect(count(text, '/backend/admin/tenants', 'POST', '201')).toBeGreaterThanOrEqual(1);
  });

  it('counts GraphQL operations by type and name, capped: past 100 names they count as "other"', async () => {
    const org = await api.newOrg();
    const run = (query: string) =>
      api.raw('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
        body: JSON.stringify({ query }),
      });
    expect((await run('query TagsForMetrics { tags { id } }')).status).toBe(200);
    expect((await run('{ tags { id } }')).status).toBe(200);
    for (let i = 0; i < 105; i++) await run(`query Flood${i} { tags { id } }`);
    const { text } = await scrape();
    expect(sample(text, 'funil_graphql_operations_total', { type: 'query', operation: 'TagsForMetrics' })).toBe(1);
    expect(sample(text, 'funil_graphql_operations_total', { type: 'query', operation: 'anonymous' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'funil_graphql_operations_total', { type: 'query', operation: 'other' })).toBeGreaterThan(0);
    const names = new Set([...text.matchAll(/^funil_graphql_operations_total\{[^}]*operation="([^"]+)"/gm)].map((m) => m[1]));
    expect(names.size).toBeLessThanOrEqual(101);
    expect(
      sample(text, 'funil_http_request_duration_seconds_count', { route: '/graphql', method: 'POST', status: '200' }),
    ).toBeGreaterThanOrEqual(107);
  });

  it('reports the database pool and, from one aggregate at scrape time, each queue’s depth and oldest waiting job', async () => {
    await api.db.sql.query(
      `INSERT INTO jobs (queue, run_at) VALUES ('metrics.test', now() - interval '90 seconds'), ('metrics.test', now() + interval '1 hour')`,
    );
    await api.db.sql.query(`INSERT INTO jobs (queue, failed_at) VALUES ('metrics.test', now())`);
    const { text } = await scrape();
    if (api.db.kind === 'postgres') expect(sample(text, 'funil_db_pool_size')).toBeGreaterThan(1);
    else expect(sample(text, 'funil_db_pool_size')).toBe(1); // the embedded database's one connection
    expect(sample(text, 'funil_db_pool_in_use')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'funil_db_pool_waiting')).toBe(0);
    expect(sample(text, 'funil_job_queue_jobs', { queue: 'metrics.test', state: 'waiting' })).toBe(1);
    expect(sample(text, 'funil_job_queue_jobs', { queue: 'metrics.test', state: 'scheduled' })).toBe(1);
    expect(sample(text, 'funil_job_queue_jobs', { queue: 'metrics.test', state: 'failed' })).toBe(1);
    expect(sample(text, 'funil_job_queue_oldest_waiting_seconds', { queue: 'metrics.test' })).toBeGreaterThanOrEqual(89);
    // A queue that empties stays, at 0.
    await api.db.sql.query(`DELETE FROM jobs WHERE queue = 'metrics.test'`);
    const after = (await scrape()).text;
    expect(sample(after, 'funil_job_queue_jobs', { queue: 'metrics.test', state: 'waiting' })).toBe(0);
    expect(sample(after, 'funil_job_queue_oldest_waiting_seconds', { queue: 'metrics.test' })).toBe(0);
  });

  it('counts webhook delivery attempts by outcome and job runs by queue', async () => {
    const org = await api.newOrg();
    let answers = 0;
    const hook = await receiver((_hit, res) => res.writeHead(answers++ === 0 ? 500 : 204).end());
    await makeWebhook(api, org, { url: hook.url, events: ['lead.created'] });
    expect((await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'Metrics', phone: '+5511987650001' } })).status).toBe(
      200,
    );
    await waitFor(() => expect(hook.hits.length).toBe(2));
    await waitFor(async () => {
      const { text } = await scrape();
      expect(sample(text, 'funil_webhook_delivery_attempts_total', { outcome: 'retrying' })).toBe(1);
      expect(sample(text, 'funil_webhook_delivery_attempts_total', { outcome: 'succeeded' })).toBe(1);
      expect(sample(text, 'funil_job_duration_seconds_count', { queue: 'webhooks.deliver', outcome: 'retry' })).toBe(1);
      expect(sample(text, 'funil_job_duration_seconds_count', { queue: 'webhooks.deliver', outcome: 'done' })).toBe(1);
      expect(sample(text, 'funil_job_duration_seconds_count', { queue: 'events.dispatch', outcome: 'done' })).toBeGreaterThanOrEqual(1);
    });
  });

  it('reports knowledge extractions running and waiting while they run', async () => {
    // Every slot taken (as other organisations' extractions would), so that this organisation's file
    // waits for one: sampling while real extractions ran and waited missed the moment when a warm
    // launcher made them quick.
    const slots = extractionSlots(api.config);
    const held = await Promise.all(Array.from({ length: api.config.extractConcurrency }, (_, i) => slots.acquire(`other-${i}`)));
    const org = await api.newOrg();
    const upload = api.rest('POST', '/backend/knowledge', { key: org.key, body: form({ name: 'n' }, ['file', 'n.md', '# Texto']) });
    try {
      await vi.waitFor(
        async () => {
          const { text } = await scrape();
          expect(sample(text, 'funil_extractions_running')).toBe(api.config.extractConcurrency);
          expect(sample(text, 'funil_extractions_waiting')).toBe(1);
        },
        { timeout: 20_000, interval: 10 },
      );
    } finally {
      // Also when the gauges are wrong: the file's other tests share this app's scheduler.
      for (const release of held) release();
    }
    expect((await upload).status).toBe(201);
    const { text } = await scrape();
    expect(sample(text, 'funil_extractions_running')).toBe(0);
    expect(sample(text, 'funil_extractions_waiting')).toBe(0);
  });
});
