// Every GraphQL connection has `totalCount`, counted in SQL: the parents of one request share one
// count (no statement per parent), and nothing is counted when it is not selected. The three
// connections that had none: Conversation.messages, Webhook.deliveries, Assistant.knowledge.
import { isObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/domains/index.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { makeAssistant, makeItem } from '../knowledge/helpers.js';
import { inbound, makeChannel, nextMobile } from '../messaging/helpers.js';
import { makeWebhook, receiver } from '../webhooks/helpers.js';

const api = useTestApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });

async function graphql(key: string, query: string) {
  const r = await api.raw('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query }),
  });
  const body = await r.json();
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
  return body.data;
}

/** The answer and the statements it took. */
async function measured(key: string, query: string): Promise<{ data: any; statements: number }> {
  let data: any;
  const statements = await api.countStatements(async () => (data = await graphql(key, query)));
  return { data, statements };
}

/**
 * `withCount` and `without` select the same connection with and without `totalCount`; they run over
 * the organisation's parents as they are, then again after `addParents` made more.
 */
async function checkCounting(org: Org, withCount: string, without: string, addParents: () => Promise<void>) {
  const few = { counted: await measured(org.key, withCount), plain: await measured(org.key, without) };
  await addParents();
  const more = { counted: await measured(org.key, withCount), plain: await measured(org.key, without) };
  // At most one more statement for the counts, whatever the number of parents.
  expect(few.counted.statements - few.plain.statements).toBeLessThanOrEqual(1);
  expect(more.counted.statements - more.plain.statements).toBe(few.counted.statements - few.plain.statements);
  return more.counted.data;
}

describe('totalCount on every connection', () => {
  it('the schema: every connection type has totalCount: Int!', () => {
    const connections = Object.values(schema.getTypeMap()).filter(
      (t) => isObjectType(t) && t.name.endsWith('Connection') && t.getFields().edges,
    );
    expect(connections.length).toBeGreaterThanOrEqual(9);
    for (const type of connections) {
      if (!isObjectType(type)) continue;
      expect(String(type.getFields().totalCount?.type), type.name).toBe('Int!');
    }
  });

  it('Conversation.messages: each conversation’s messages, one page of conversations in one count', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    const ana = await inbound(api, org, channel.id, nextMobile(), 'um', 'Ana');
    for (const text of ['dois', 'três']) await inbound(api, org, channel.id, ana.lead.phone, text);
    const page = (fields: string) => `{ conversations { data { id messages(first: 1) { ${fields} nodes { content } } } } }`;
    const data = await checkCounting(org, page('totalCount'), page(''), async () => {
      for (const name of ['Bruno', 'Carla']) await inbound(api, org, channel.id, nextMobile(), 'oi', name);
    });
    expect(data.conversations.data.map((c: any) => c.messages.totalCount).sort()).toEqual([1, 1, 3]);
    const anas = data.conversations.data.find((c: any) => c.id === ana.conversation.id);
    expect(anas.messages).toEqual({ totalCount: 3, nodes: [{ content: 'um' }] });
  });

  it('Webhook.deliveries: each hook’s log, every hook counted in one statement', async () => {
    const org = await api.newOrg();
    const hook = await receiver();
    const test = async (id: string) => expect((await api.rest('POST', `/backend/webhooks/${id}/test`, { key: org.key })).status).toBe(200);
    const first = await makeWebhook(api, org, { url: hook.url, events: ['lead.created'] });
    for (let i = 0; i < 3; i++) await test(first.id);
    const query = (fields: string) => `{ webhooks { id deliveries(first: 1) { ${fields} nodes { event_type } } } }`;
    const data = await checkCounting(org, query('totalCount'), query(''), async () => {
      for (let i = 0; i < 2; i++) await test((await makeWebhook(api, org, { url: hook.url, events: ['lead.created'] })).id);
      await makeWebhook(api, org, { url: hook.url, events: ['deal.created'] });
    });
    expect(data.webhooks.map((w: any) => w.deliveries.totalCount)).toEqual([3, 1, 1, 0]);
    expect(data.webhooks[0].deliveries.nodes).toEqual([{ event_type: 'webhook.test' }]);
  });

  it('Assistant.knowledge: what each assistant sees (exclusive items, global ones not excluded), one count for all', async () => {
    const org = await api.newOrg();
    const ana = await makeAssistant(api, org, 'Ana');
    const bia = await makeAssistant(api, org, 'Bia');
    await makeItem(api, org, { name: 'Global' });
    const hidden = await makeItem(api, org, { name: 'Escondido de Bia' });
    expect((await api.rest('POST', `/backend/knowledge/${hidden.id}/exclusions/${bia.id}`, { key: org.key })).status).toBe(200);
    await makeItem(api, org, { name: 'Só de Ana', assistant_id: ana.id });
    const query = (fields: string) => `{ assistants { name knowledge(first: 1) { ${fields} nodes { name } } } }`;
    const data = await checkCounting(org, query('totalCount'), query(''), async () => {
      const caio = await makeAssistant(api, org, 'Caio');
      await makeItem(api, org, { name: 'Só de Caio', assistant_id: caio.id });
      await makeAssistant(api, org, 'Duda');
    });
    expect(data.assistants.map((a: any) => [a.name, a.knowledge.totalCount])).toEqual([
      ['Ana', 3],
      ['Bia', 1],
      ['Caio', 3],
      ['Duda', 2],
    ]);
    // Not selected, not counted: the count is a statement of its own here.
    const plain = await measured(org.key, query(''));
    expect((await measured(org.key, query('totalCount'))).statements).toBe(plain.statements + 1);
    // Another organisation's items are not counted.
    const other = await api.newOrg();
    await makeItem(api, other, { name: 'Alheio' });
    expect((await graphql(org.key, query('totalCount'))).assistants.map((a: any) => a.knowledge.totalCount)).toEqual([3, 1, 3, 2]);
  });
});
