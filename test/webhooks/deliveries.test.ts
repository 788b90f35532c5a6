// Deliveries end to end: a change through the API, the job runner of the app, a real receiver on
// 127.0.0.1. Signatures (reference library and plain HMAC), retries with a stable webhook-id, what 3xx,
// 410 and 429 + Retry-After do, inactive hooks, secret regeneration's grace window, redelivery, the
// delivery log, and a slow receiver beside a fast one. Schedule: 0, 200, 200 ms (3 attempts).
import { describe, expect, it } from 'vitest';
import type { Org } from '../helpers/app.js';
import { nextPhone } from '../helpers/factories.js';
import {
  deliveries,
  makeWebhook,
  ok204,
  plainSignature,
  receiver,
  signaturesOf,
  sleep,
  useWebhookApp,
  verifyStandard,
  waitFor,
  type Hit,
} from './helpers.js';

const api = useWebhookApp();

async function newLead(org: Org, name = 'Ana') {
  const r = await api.rest('POST', '/backend/leads', { key: org.key, body: { name, phone: nextPhone() } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data as { id: string; name: string };
}

const status =
  (code: number, headers: Record<string, string> = {}) =>
  (_hit: Hit, res: import('node:http').ServerResponse) =>
    res.writeHead(code, headers).end('x');

describe('a delivery', () => {
  it('is signed over the exact bytes: the Standard Webhooks library and a plain HMAC both verify it', async () => {
    const org = await api.newOrg();
    const hook = await receiver();
    const webhook = await makeWebhook(api, org, { url: hook.url, events: ['lead.created'] });
    const lead = await newLead(org, 'João Ação');

    const [hit] = await waitFor(() => (expect(hook.hits).toHaveLength(1), hook.hits));
    expect(hit.headers['content-type']).toBe('application/json');
    expect(hit.headers['webhook-id']).toMatch(/^msg_[A-Za-z0-9_-]{27}$/);
    expect(Math.abs(Number(hit.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
    expect(verifyStandard(webhook.secret, hit)).toEqual(hit.json);
    expect(signaturesOf(hit)).toEqual([plainSignature(webhook.secret, hit)]);
    expect(hit.json).toEqual({
      type: 'lead.created',
      timestamp: expect.any(String),
      data: expect.objectContaining({ id: lead.id, name: 'João Ação' }),
    });
    expect(() => verifyStandard(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, hit)).toThrow();

    // The row is written once the receiver has answered.
    const log = await waitFor(async () => {
      const rows = await deliveries(api, org, webhook.id);
      expect(rows).toHaveLength(1);
      return rows;
    });
    expect(log).toEqual([
      {
        id: expect.any(String),
        event_id: expect.any(String),
        event_type: 'lead.created',
        attempt: 1,
        status: 'succeeded',
        response_status: 204,
        error: null,
        duration_ms: expect.any(Number),
        next_attempt_at: null,
        created_at: expect.any(String),
      },
    ]);
  });

  it('goes only to the hooks subscribed to the event kind', async () => {
    const org = await api.newOrg();
    const created = await receiver();
    const updated = await receiver();
    await makeWebhook(api, org, { url: created.url, events: ['lead.created'] });
    await makeWebhook(api, org, { url: updated.url, events: ['lead.updated'] });
    const lead = await newLead(org);
    await api.rest('PUT', `/backend/leads/${lead.id}`, { key: org.key, body: { company: 'ACME' } });
    await waitFor(() => expect(updated.hits).toHaveLength(1));
    await waitFor(() => expect(created.hits).toHaveLength(1));
    expect(created.hits[0].json.type).toBe('lead.created');
    expect(updated.hits[0].json).toMatchObject({ type: 'lead.updated', data: { id: lead.id, company: 'ACME' } });
  });
});

describe('retries', () => {
  it('retries a failing receiver with the same webhook-id and body; a 2xx ends it', async () => {
    const org = await api.newOrg();
    let calls = 0;
    const hook = await receiver((_hit, res) => res.writeHead(++calls < 3 ? 500 : 200).end());
    const webhook = await makeWebhook(api, org, { url: hook.url, events: ['lead.created'] });
    await newLead(org);

    await waitFor(() => expect(hook.hits).toHaveLength(3));
    await sleep(600); // nothing after the 2xx
    expect(hook.hits).toHaveLength(3);
    expect(new Set(hook.hits.map((h) => h.headers['webhook-id'])).size).toBe(1);
    expect(new Set(hook.hits.map((h) => h.body.toString())).size).toBe(1);
    for (const hit of hook.hits) verifyStandard(webhook.secret, hit);
    expect(hook.hits[1].at - hook.hits[0].at).toBeGreaterThanOrEqual(150);

    const log = await waitFor(
      async () => (expect(await deliveries(api, org, webhook.id)).toHaveLength(3), deliveries(api, org, webhook.id)),
    );
    expect(log.map((d) => [d.attempt, d.status, d.response_status])).toEqual([
      [3, 'succeeded', 200],
      [2, 'retrying', 500],
      [1, 'retrying', 500],
    ]);
    expect(log[1].error).toBe('O receptor respondeu HTTP 500');
    expect(Date.parse(log[2].next_attempt_at) - Date.parse(log[2].created_at)).toBeGreaterThanOrEqual(150);
    expect(log[0].next_attempt_at).toBeNull();
  });

  it('gives up after the schedule: three attempts, the last one failed', async () => {
    const org = await api.newOrg();
    const hook = await receiver(status(503));
    const webhook = await makeWebhook(api, org, { url: hook.url, events: ['lead.created'] });
    await newLead(org);
    await waitFor(async () =>
      expect((await deliveries(api, org, webhook.id)).map((d) => d.status)).toEqual(['failed', 'retrying', 'retrying']),
    );
    await sleep(600);
    expect(hook.hits).toHaveLength(3);
  });

  it('does not follow a redirect: a 3xx is a failed attempt', async () => {
    const org = await api.newOrg();
    const hook = await receiver((hit, res) =>
      hit.path === '/hook' ? res.writeHead(302, { location: '/elsewhere' }).end() : res.writeHead(204).end(),
    );
    const webhook = await makeWebhook(api, org, { url: hook.url, events: ['lead.created'] });
    await newLead(org);
    await waitFor(async () =>
      expect((await deliveries(api, org, webhook.id)).map((d) => d.status)).toEqual(['failed', 'retrying', 'retrying']),
    );
    expect(hook.hits.map((h) => h.path)).toEqual(['/hook', '/hook', '/hook']);
    expect((await deliveries(api, org, webhook.id))[0]).toMatchObject({
      response_status: 302,
      error: 'Redirecionamento não seguido (HTTP 302)',
    });
  });

  it('410 Gone disables the hook: no retry, and no later event is sent', async () => {
    const org = await api.newOrg();
    const hook = await receiver(status(410));
    const webhook = await makeWebhook(api, org, { url: hook.url, events: ['lead.created'] });
    await newLead(org);
    await waitFor(async () =>
      expect((await api.rest('GET', `/backend/webhooks/${webhook.id}`, { key: org.key })).body.data.active).toBe(false),
    );
    const log = await deliveries(api, org, webhook.id);
    expect(log).toMatchObject([{ attempt: 1, status: 'failed', response_status: 410, next_attempt_at: null }]);
    await newLead(org);
    await sleep(600);
    expect(hook.hits).toHaveLength(1);
  });

  it('honours Retry-After on 429 over the shorter schedule', async () => {
    const org = await api.newOrg();
    let calls = 0;
    const hook = await receiver((_hit, res) =>
      ++calls === 1 ? res.writeHead(429, { 'retry-after': '1' }).end() : res.writeHead(200).end(),
    );
    const webhook = await makeWebhook(api, org, { url: hook.url, events: ['lead.created'] });
    await newLead(org);
    await waitFor(() => expect(hook.hits).toHaveLength(2));
    expect(hook.hits[1].at - hook.hits[0].at).toBeGreaterThanOrEqual(950);
    const [, first] = await waitFor(async () => {
      const rows = await deliveries(api, org, webhook.id);
      expect(rows).toHaveLength(2);
      return rows;
    });
    expect(first).toMatchObject({ attempt: 1, status: 'retrying', response_status: 429 });
    expect(Date.parse(first.next_attempt_at) - Date.parse(first.created_at)).toBeGreaterThanOrEqual(950);
  });
});

describe('hooks and secrets', () => {
  it('never sends an event raised while the hook was inactive, nor pending retries after it is deactivated', async () => {
    const org = await api.newOrg();
    const hook = await receiver();
    const webhook = await makeWebhook(api, org, { url: hook.url, events: ['lead.created'], active: false });
    await newLead(org, 'while inactive');
    await sleep(300);
    await api.rest('PUT', `/backend/webhooks/${webhook.id}`, { key: org.key, body: { active: true } });
    await newLead(org, 'after activation');
    await waitFor(() => expect(hook.hits).toHaveLength(1));
    await sleep(400);
    expect(hook.hits.map((h) => h.json.data.name)).toEqual(['after activation']);

    // A failing receiver is retried every 200 ms; deactivating the hook ends the retries.
    hook.reply = status(500);
    await newLead(org, 'failing');
    await waitFor(() => expect(hook.hits).toHaveLength(2));
    await api.rest('PUT', `/backend/webhooks/${webhook.id}`, { key: org.key, body: { active: false } });
    const count = hook.hits.length;
    await sleep(700);
    expect(hook.hits.length).toBeLessThanOrEqual(count + 1); // at most the attempt already under way
  });

  it('signs with both secrets for 24 hours after a regeneration, then with the new one only', async () => {
    const org = await api.newOrg();
    const hook = await receiver();
    const webhook = await makeWebhook(api, org, { url: hook.url, events: ['lead.created'] });
    const { secret } = (await api.rest('POST', `/backend/webhooks/${webhook.id}/regenerate-secret`, { key: org.key })).body.data;
    await newLead(org);
    const [both] = await waitFor(() => (expect(hook.hits).toHaveLength(1), hook.hits));
    expect(signaturesOf(both)).toEqual([plainSignature(secret, both), plainSignature(webhook.secret, both)]);
    verifyStandard(secret, both);
    verifyStandard(webhook.secret, both);

    // 24 hours later (the expiry moved to the past): the old secret no longer signs.
    await api.db.sql.query(`UPDATE webhooks SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`, [webhook.id]);
    await newLead(org);
    await waitFor(() => expect(hook.hits).toHaveLength(2));
    const after = hook.hits[1];
    expect(signaturesOf(after)).toEqual([plainSignature(secret, after)]);
    verifyStandard(secret, after);
    expect(() => verifyStandard(webhook.secret, after)).toThrow();
  });

  it('redelivers an event: a new attempt in the log, with the same webhook-id', async () => {
    const org = await api.newOrg();
    const hook = await receiver();
    const webhook = await makeWebhook(api, org, { url: hook.url, events: ['lead.created'] });
    await newLead(org);
    const [first] = await waitFor(async () => {
      const log = await deliveries(api, org, webhook.id);
      expect(log).toHaveLength(1);
      return log;
    });
    const r = await api.rest('POST', `/backend/webhooks/${webhook.id}/deliveries/${first.id}/redeliver`, { key: org.key });
    expect(r).toMatchObject({ status: 200, body: { success: true } });
    await waitFor(() => expect(hook.hits).toHaveLength(2));
    expect(hook.hits[1].headers['webhook-id']).toBe(hook.hits[0].headers['webhook-id']);
    expect(hook.hits[1].body.equals(hook.hits[0].body)).toBe(true);
    const log = await waitFor(
      async () => (expect(await deliveries(api, org, webhook.id)).toHaveLength(2), deliveries(api, org, webhook.id)),
    );
    expect(log.map((d) => [d.attempt, d.event_id])).toEqual([
      [2, first.event_id],
      [1, first.event_id],
    ]);

    // Another webhook's delivery id, or an inactive hook, is refused.
    const other = await makeWebhook(api, org, { url: hook.url, events: ['deal.won'] });
    expect((await api.rest('POST', `/backend/webhooks/${other.id}/deliveries/${first.id}/redeliver`, { key: org.key })).status).toBe(404);
    await api.rest('PUT', `/backend/webhooks/${webhook.id}`, { key: org.key, body: { active: false } });
    const inactive = await api.rest('POST', `/backend/webhooks/${webhook.id}/deliveries/${first.id}/redeliver`, { key: org.key });
    expect(inactive.status).toBe(409);
    expect(inactive.body.error.code).toBe('CONFLICT');
  });
});

describe('delivery log', () => {
  it('pages newest first with limit (default 20, max 100) and offset, at a constant statement count', async () => {
    const org = await api.newOrg();
    const hook = await receiver();
    const webhook = await makeWebhook(api, org, { url: hook.url, events: ['lead.created'] });
    for (let i = 0; i < 5; i++) await newLead(org, `L${i}`);
    await waitFor(async () => expect(await deliveries(api, org, webhook.id)).toHaveLength(5));

    const page = await api.rest('GET', `/backend/webhooks/${webhook.id}/deliveries?limit=2&offset=1`, { key: org.key });
    expect(page.body.pagination).toEqual({ total: 5, limit: 2, offset: 1, has_more: true });
    const all = await deliveries(api, org, webhook.id);
    expect(page.body.data).toEqual(all.slice(1, 3));
    const times = all.map((d) => Date.parse(d.created_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect((await api.rest('GET', `/backend/webhooks/${webhook.id}/deliveries?limit=500`, { key: org.key })).body.pagination.limit).toBe(
      20,
    );

    // The same log as a GraphQL connection on the webhook.
    const graph = await api.raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
      body: JSON.stringify({
        query:
          'query($id: UUID!) { webhook(id: $id) { deliveries(first: 2) { edges { node { id attempt status } } pageInfo { hasNextPage } } } }',
        variables: { id: webhook.id },
      }),
    });
    const { deliveries: connection } = ((await graph.json()) as any).data.webhook;
    expect(connection.edges.map((e: any) => e.node)).toEqual(all.slice(0, 2).map((d) => ({ id: d.id, attempt: 1, status: 'succeeded' })));
    expect(connection.pageInfo.hasNextPage).toBe(true);

    const one = await api.countStatements(() => api.rest('GET', `/backend/webhooks/${webhook.id}/deliveries?limit=1`, { key: org.key }));
    const five = await api.countStatements(() => api.rest('GET', `/backend/webhooks/${webhook.id}/deliveries?limit=5`, { key: org.key }));
    expect(five).toBe(one);
    expect(five).toBeLessThanOrEqual(5);
  });
});

describe('isolation between hooks', () => {
  it('a slow receiver does not delay another hook’s deliveries', async () => {
    const org = await api.newOrg();
    const slow = await receiver((_hit, res) => void setTimeout(() => res.writeHead(200).end(), 3_000));
    const fast = await receiver(ok204);
    await makeWebhook(api, org, { url: slow.url, events: ['lead.created'] });
    await makeWebhook(api, org, { url: fast.url, events: ['lead.created'] });
    const started = Date.now();
    for (let i = 0; i < 3; i++) await newLead(org, `L${i}`);
    await waitFor(() => expect(fast.hits).toHaveLength(3), 2_500);
    await waitFor(() => expect(slow.hits).toHaveLength(3), 5_000);
    expect(Math.max(...fast.hits.map((h) => h.at)) - started).toBeLessThan(2_500);
  });
});
