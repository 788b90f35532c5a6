// Webhook tooling (decisions.md "What integrations rely on"): the event types with their payload
// schemas (derived from the REST reads, the same in the OpenAPI `webhooks` section), real deliveries
// valid against them, the signed test event verified by the Standard Webhooks library on a real
// loopback receiver, and redelivery answering with the new delivery's id.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { standaloneSchema } from '../../src/rest/openapi/webhooks.js';
import { makePipeline, nextPhone } from '../helpers/factories.js';
import { deliveries, makeWebhook, receiver, useWebhookApp, verifyStandard, waitFor } from './helpers.js';

const api = useWebhookApp();
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

async function eventTypes(key: string) {
  const r = await api.rest('GET', '/backend/webhooks/event-types', { key });
  expect(r.status).toBe(200);
  return r.body.data as { type: string; description: string; schema: Record<string, unknown> }[];
}

describe('GET /backend/webhooks/event-types', () => {
  it('lists every event type with a description and the schema the OpenAPI webhooks section shows', async () => {
    const org = await api.newOrg();
    const types = await eventTypes(org.key);
    // The spec's order, lead.merged after the messaging types, the cadence types, then the test event.
    expect(types.map((t) => t.type)).toEqual([
      'lead.created',
      'lead.updated',
      'lead.status_changed',
      'message.received',
      'message.sent',
      'message.failed',
      'conversation.created',
      'conversation.assigned',
      'lead.merged',
      'deal.created',
      'deal.updated',
      'deal.stage_changed',
      'deal.won',
      'deal.lost',
      'deal.deleted',
      'cadence.enrolled',
      'cadence.step_sent',
      'cadence.completed',
      'cadence.stopped',
      'webhook.test',
    ]);
    for (const t of types) expect(t.description.length).toBeGreaterThan(10);
    const doc = await (await api.raw('/backend/openapi.json')).json();
    expect(Object.keys(doc.webhooks)).toEqual(types.map((t) => t.type));
    for (const t of types) {
      const documented = doc.webhooks[t.type].post.requestBody.content['application/json'].schema;
      expect(standaloneSchema(documented, doc.components.schemas), t.type).toEqual(t.schema);
    }
    // Derived from the reads: a field added to Deal (stage_entered_at) is there without a line here.
    const moved = types.find((t) => t.type === 'deal.stage_changed')!.schema as any;
    expect(moved.properties.data.required).toEqual(
      expect.arrayContaining(['stage_entered_at', 'lead_name', 'from_stage_id', 'to_stage_id']),
    );
    // Owner/admin only, like the rest of webhooks.
    const operator = await api.keyFor(org, 'operator');
    expect((await api.rest('GET', '/backend/webhooks/event-types', { key: operator })).status).toBe(403);
  });

  it('real deliveries are valid against their type’s schema', async () => {
    const org = await api.newOrg();
    const hook = await receiver();
    await makeWebhook(api, org, {
      url: hook.url,
      events: ['lead.created', 'lead.updated', 'deal.created', 'deal.stage_changed', 'deal.won', 'deal.deleted'],
    });
    const lead = (
      await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'Ana', phone: nextPhone(), custom_fields: { plano: 'pro' } } })
    ).body.data;
    await api.rest('PUT', `/backend/leads/${lead.id}`, { key: org.key, body: { company: 'Acme' } });
    const p = await makePipeline(api, org);
    const deal = (
      await api.rest('POST', '/backend/pipeline/deals', {
        key: org.key,
        body: { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id, products: [{ name: 'X', price: 2, qty: 3 }] },
      })
    ).body;
    await api.rest('PUT', `/backend/pipeline/deals/${deal.id}/stage`, { key: org.key, body: { stage_id: p.ganho } });
    await api.rest('DELETE', `/backend/pipeline/deals/${deal.id}`, { key: org.key });
    const seen = ['lead.created', 'lead.updated', 'deal.created', 'deal.stage_changed', 'deal.won', 'deal.deleted'];
    await waitFor(() => expect(new Set(hook.hits.map((h) => h.json.type))).toEqual(new Set(seen)));

    const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
    const types = await eventTypes(org.key);
    const schemas = Object.fromEntries(types.map((t) => [t.type, ajv.compile(t.schema)]));
    for (const hit of hook.hits) {
      const validate = schemas[hit.json.type];
      expect(validate(hit.json), `${hit.json.type}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      // The schemas let payloads gain keys later; today's payload has exactly the documented ones.
      const documented = (types.find((t) => t.type === hit.json.type)!.schema as any).properties.data.properties;
      expect(Object.keys(hit.json.data).sort(), hit.json.type).toEqual(Object.keys(documented).sort());
    }
    // A schema that can fail: a payload missing a field is refused.
    const { data, ...rest } = hook.hits.find((h) => h.json.type === 'deal.created')!.json;
    const { stage_entered_at: _dropped, ...partial } = data;
    expect(schemas['deal.created']({ ...rest, data: partial })).toBe(false);
  });
});

describe('POST /backend/webhooks/{id}/test', () => {
  it('sends a signed webhook.test event the Standard Webhooks library verifies, and answers with its delivery', async () => {
    const org = await api.newOrg();
    const hook = await receiver((_hit, res) => res.writeHead(200).end('ok'));
    const webhook = await makeWebhook(api, org, { url: hook.url, events: ['lead.created'] });
    const r = await api.rest('POST', `/backend/webhooks/${webhook.id}/test`, { key: org.key });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      id: expect.any(String),
      event_type: 'webhook.test',
      attempt: 1,
      status: 'succeeded',
      response_status: 200,
      error: null,
      next_attempt_at: null,
    });

    expect(hook.hits).toHaveLength(1);
    const payload = verifyStandard(webhook.secret, hook.hits[0]);
    expect(payload).toEqual({
      type: 'webhook.test',
      timestamp: expect.any(String),
      data: { webhook_id: webhook.id, message: expect.any(String) },
    });
    const ajv = addFormats(new Ajv2020({ strict: false }));
    const schema = (await eventTypes(org.key)).find((t) => t.type === 'webhook.test')!.schema;
    expect(ajv.validate(schema, payload)).toBe(true);
    expect((await deliveries(api, org, webhook.id)).map((d) => d.id)).toEqual([r.body.data.id]);

    // A receiver that fails: the answer says so, and nothing is retried.
    hook.reply = (_hit, res) => res.writeHead(500).end();
    const failed = await api.rest('POST', `/backend/webhooks/${webhook.id}/test`, { key: org.key });
    expect(failed.body.data).toMatchObject({ status: 'failed', response_status: 500, next_attempt_at: null });
    // Another organisation's hook is 404.
    const other = await api.newOrg();
    expect((await api.rest('POST', `/backend/webhooks/${webhook.id}/test`, { key: other.key })).status).toBe(404);
  });

  it('redelivery answers with the new delivery’s id, which the log then shows', async () => {
    const org = await api.newOrg();
    const hook = await receiver();
    const webhook = await makeWebhook(api, org, { url: hook.url, events: ['lead.created'] });
    const first = (await api.rest('POST', `/backend/webhooks/${webhook.id}/test`, { key: org.key })).body.data;
    const r = await api.rest('POST', `/backend/webhooks/${webhook.id}/deliveries/${first.id}/redeliver`, { key: org.key });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, delivery_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const log = await waitFor(async () => {
      const rows = await deliveries(api, org, webhook.id);
      expect(rows).toHaveLength(2);
      return rows;
    });
    expect(log[0]).toMatchObject({ id: r.body.delivery_id, event_id: first.event_id, attempt: 2, status: 'succeeded' });
    expect(hook.hits[1].headers['webhook-id']).toBe(hook.hits[0].headers['webhook-id']);
  });
});
