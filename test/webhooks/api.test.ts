// The webhooks API (envelope style, owner/admin) on both transports: the secret shown only on creation
// and regeneration, validation, permissions and tenant isolation. Deliveries: deliveries.test.ts.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useTestApp, type Org } from '../helpers/app.js';
import { WEBHOOKS_MAX } from '../../src/domains/webhooks/service.js';
import { secrets } from '../../src/secrets.js';
import { makeWebhook } from './helpers.js';

const api = useTestApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
const URL_A = 'http://127.0.0.1:9/a';

async function gql(org: Org, query: string, variables: Record<string, unknown> = {}) {
  const r = await api.raw('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
    body: JSON.stringify({ query, variables }),
  });
  return (await r.json()) as { data?: any; errors?: any[] };
}

describe('REST', () => {
  it('creates (201, secret once), lists, reads, updates and deletes (204)', async () => {
    const org = await api.newOrg();
    const created = await api.rest('POST', '/backend/webhooks', {
      key: org.key,
      body: { url: URL_A, events: ['lead.created', 'deal.won', 'lead.created'] },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      success: true,
      data: {
        id: expect.any(String),
        url: URL_A,
        events: ['lead.created', 'deal.won'],
        active: true,
        created_at: expect.any(String),
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      },
    });
    const { secret, ...hook } = created.body.data;

    const one = await api.rest('GET', `/backend/webhooks/${hook.id}`, { key: org.key });
    expect(one).toMatchObject({ status: 200, body: { success: true, data: hook } });
    expect(JSON.stringify(one.body)).not.toContain(secret);
    const list = await api.rest('GET', '/backend/webhooks', { key: org.key });
    expect(list.body).toEqual({ success: true, data: [hook] });

    const updated = await api.rest('PUT', `/backend/webhooks/${hook.id}`, { key: org.key, body: { events: ['deal.lost'], active: false } });
    expect(updated.body).toEqual({ success: true, data: { ...hook, events: ['deal.lost'], active: false } });
    const moved = await api.rest('PUT', `/backend/webhooks/${hook.id}`, { key: org.key, body: { url: 'http://127.0.0.1:9/b' } });
    expect(moved.body.data).toMatchObject({ url: 'http://127.0.0.1:9/b', events: ['deal.lost'], active: false });

    const deleted = await api.rest('DELETE', `/backend/webhooks/${hook.id}`, { key: org.key });
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeUndefined();
    expect((await api.rest('GET', `/backend/webhooks/${hook.id}`, { key: org.key })).status).toBe(404);
    expect((await api.rest('DELETE', `/backend/webhooks/${hook.id}`, { key: org.key })).status).toBe(404);
  });

  it('regenerates the secret: a new one, shown once, the old one kept for 24 hours', async () => {
    const org = await api.newOrg();
    const hook = await makeWebhook(api, org, { url: URL_A, events: ['lead.created'] });
    const r = await api.rest('POST', `/backend/webhooks/${hook.id}/regenerate-secret`, { key: org.key });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, data: { secret: expect.stringMatching(/^whsec_/) } });
    expect(r.body.data.secret).not.toBe(hook.secret);
    const [row] = await api.db.sql.query<{ secret: string; previous_secret: string; expires: Date }>(
      'SELECT secret, previous_secret, previous_secret_expires_at AS expires FROM webhooks WHERE id = $1',
      [hook.id],
    );
    // Stored sealed (src/secrets.ts), opening to the secrets shown.
    expect(row.secret).toMatch(/^enc:v1:/);
    expect(secrets().open(row.secret)).toBe(r.body.data.secret);
    expect(secrets().open(row.previous_secret)).toBe(hook.secret);
    expect(new Date(row.expires).getTime() - Date.now()).toBeGreaterThan(24 * 3600_000 - 60_000);
    expect(new Date(row.expires).getTime() - Date.now()).toBeLessThanOrEqual(24 * 3600_000);
  });

  it('answers bad input with 400 VALIDATION_ERROR and changes nothing', async () => {
    const org = await api.newOrg();
    const hook = await makeWebhook(api, org, { url: URL_A, events: ['lead.created'] });
    // Each names the field that was wrong (decisions.md: `error.details`).
    const bad: [string, unknown, string][] = [
      ['unknown event kind', { url: URL_A, events: ['lead.deleted'] }, 'events'],
      ['no event kinds', { url: URL_A, events: [] }, 'events'],
      ['events not a list', { url: URL_A, events: 'lead.created' }, 'events'],
      ['missing url', { events: ['lead.created'] }, 'url'],
      ['not a URL', { url: 'not a url', events: ['lead.created'] }, 'url'],
      ['ftp scheme', { url: 'ftp://127.0.0.1/x', events: ['lead.created'] }, 'url'],
      ['userinfo', { url: 'http://user:pw@127.0.0.1/x', events: ['lead.created'] }, 'url'],
      ['active not a boolean', { url: URL_A, events: ['lead.created'], active: 'yes' }, 'active'],
    ];
    for (const [name, body, field] of bad) {
      const r = await api.rest('POST', '/backend/webhooks', { key: org.key, body });
      expect(r.status, name).toBe(400);
      expect(r.body, name).toEqual({
        success: false,
        error: { code: 'VALIDATION_ERROR', message: expect.any(String), details: [{ field, message: expect.any(String) }] },
      });
    }
    for (const body of [{ events: ['nope'] }, { url: 'gopher://x' }, { active: null }, { events: null }, { url: null }]) {
      const r = await api.rest('PUT', `/backend/webhooks/${hook.id}`, { key: org.key, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe('VALIDATION_ERROR');
    }
    const list = await api.rest('GET', '/backend/webhooks', { key: org.key });
    expect(list.body.data).toEqual([{ id: hook.id, url: URL_A, events: ['lead.created'], active: true, created_at: hook.created_at }]);
    expect((await api.rest('GET', '/backend/webhooks/not-a-uuid', { key: org.key })).status).toBe(400);
  });

  it(`takes at most ${WEBHOOKS_MAX} webhooks per organisation, also when they are registered at once (400 beyond)`, async () => {
    const org = await api.newOrg();
    const register = (i: number) =>
      api.rest('POST', '/backend/webhooks', { key: org.key, body: { url: `${URL_A}/${i}`, events: ['lead.created'] } });
    const first = await Promise.all(Array.from({ length: WEBHOOKS_MAX - 2 }, (_, i) => register(i)));
    expect(first.every((r) => r.status === 201)).toBe(true);
    const racing = await Promise.all(Array.from({ length: 6 }, (_, i) => register(100 + i)));
    expect(racing.map((r) => r.status).sort()).toEqual([201, 201, 400, 400, 400, 400]);
    for (const r of racing.filter((x) => x.status === 400))
      expect(r.body).toMatchObject({ success: false, error: { code: 'VALIDATION_ERROR', details: [{ field: 'url' }] } });
    const list = await api.rest('GET', '/backend/webhooks', { key: org.key });
    expect(list.body.data).toHaveLength(WEBHOOKS_MAX);
    // Another organisation has its own room.
    expect(
      (await api.rest('POST', '/backend/webhooks', { key: (await api.newOrg()).key, body: { url: URL_A, events: ['lead.created'] } }))
        .status,
    ).toBe(201);
  });

  it('is for owners and admins: an operator gets 403 FORBIDDEN on every route', async () => {
    const org = await api.newOrg();
    const hook = await makeWebhook(api, org, { url: URL_A, events: ['lead.created'] });
    const admin = await api.keyFor(org, 'admin');
    expect((await api.rest('GET', `/backend/webhooks/${hook.id}`, { key: admin })).status).toBe(200);
    const operator = await api.keyFor(org, 'operator');
    const calls: [string, string, unknown?][] = [
      ['GET', '/backend/webhooks'],
      ['POST', '/backend/webhooks', { url: URL_A, events: ['lead.created'] }],
      ['GET', `/backend/webhooks/${hook.id}`],
      ['PUT', `/backend/webhooks/${hook.id}`, { active: false }],
      ['DELETE', `/backend/webhooks/${hook.id}`],
      ['POST', `/backend/webhooks/${hook.id}/regenerate-secret`],
      ['GET', `/backend/webhooks/${hook.id}/deliveries`],
      ['POST', `/backend/webhooks/${hook.id}/deliveries/${randomUUID()}/redeliver`],
    ];
    for (const [method, path, body] of calls) {
      const r = await api.rest(method, path, { key: operator, body });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body).toEqual({ success: false, error: { code: 'FORBIDDEN', message: expect.any(String) } });
    }
    expect((await api.rest('GET', `/backend/webhooks/${hook.id}`, { key: org.key })).body.data.active).toBe(true);
  });

  it('keeps organisations apart: another organisation’s webhook is 404 everywhere and stays unchanged', async () => {
    const owner = await api.newOrg();
    const other = await api.newOrg();
    const hook = await makeWebhook(api, owner, { url: URL_A, events: ['lead.created'] });
    const calls: [string, string, unknown?][] = [
      ['GET', `/backend/webhooks/${hook.id}`],
      ['PUT', `/backend/webhooks/${hook.id}`, { active: false }],
      ['DELETE', `/backend/webhooks/${hook.id}`],
      ['POST', `/backend/webhooks/${hook.id}/regenerate-secret`],
      ['GET', `/backend/webhooks/${hook.id}/deliveries`],
      ['POST', `/backend/webhooks/${hook.id}/deliveries/${randomUUID()}/redeliver`],
    ];
    for (const [method, path, body] of calls) {
      const r = await api.rest(method, path, { key: other.key, body });
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body.error.code).toBe('NOT_FOUND');
    }
    expect((await api.rest('GET', '/backend/webhooks', { key: other.key })).body.data).toEqual([]);
    const [row] = await api.db.sql.query<{ secret: string; active: boolean }>('SELECT secret, active FROM webhooks WHERE id = $1', [
      hook.id,
    ]);
    expect({ ...row, secret: secrets().open(row.secret) }).toEqual({ secret: hook.secret, active: true });
  });
});

describe('GraphQL', () => {
  it('has the same operations, and Webhook.deliveries as a connection', async () => {
    const org = await api.newOrg();
    const created = await gql(
      org,
      'mutation($url: String!) { createWebhook(url: $url, events: ["deal.won"]) { id url events active secret } }',
      { url: URL_A },
    );
    expect(created.errors).toBeUndefined();
    const { id, secret } = created.data.createWebhook;
    expect(secret).toMatch(/^whsec_/);

    const updated = await gql(
      org,
      'mutation($id: UUID!) { updateWebhook(id: $id, events: ["deal.won", "deal.lost"], active: false) { events active } }',
      { id },
    );
    expect(updated.data.updateWebhook).toEqual({ events: ['deal.won', 'deal.lost'], active: false });
    const regenerated = await gql(org, 'mutation($id: UUID!) { regenerateWebhookSecret(id: $id) { secret } }', { id });
    expect(regenerated.data.regenerateWebhookSecret.secret).not.toBe(secret);

    const read = await gql(
      org,
      `query($id: UUID!) {
        webhooks { id }
        webhook(id: $id) { url deliveries(first: 5) { edges { node { id attempt status } } pageInfo { hasNextPage } } }
        webhookDeliveries(id: $id, limit: 5) { data { id } pagination { total limit offset has_more } }
      }`,
      { id },
    );
    expect(read.errors).toBeUndefined();
    expect(read.data).toEqual({
      webhooks: [{ id }],
      webhook: { url: URL_A, deliveries: { edges: [], pageInfo: { hasNextPage: false } } },
      webhookDeliveries: { data: [], pagination: { total: 0, limit: 5, offset: 0, has_more: false } },
    });

    const unknown = await gql(org, 'mutation { createWebhook(url: "http://127.0.0.1:9/x", events: ["nope"]) { id } }');
    expect(unknown.errors?.[0].extensions).toMatchObject({ code: 'INVALID_INPUT', status: 400 });
    const redeliver = await gql(org, 'mutation($id: UUID!, $d: UUID!) { redeliverWebhookDelivery(id: $id, delivery_id: $d) { success } }', {
      id,
      d: randomUUID(),
    });
    expect(redeliver.errors?.[0].extensions).toMatchObject({ code: 'NOT_FOUND' });
    expect((await gql(org, 'mutation($id: UUID!) { deleteWebhook(id: $id) }', { id })).data).toEqual({ deleteWebhook: true });
    expect((await gql(org, 'query { webhooks { id } }')).data).toEqual({ webhooks: [] });
  });
});
