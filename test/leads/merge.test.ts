// POST /backend/leads/{id}/merge and mergeLead: two leads of one person become one, in one
// transaction. Afterwards no row points at the merged lead; its fields fill what the survivor lacks;
// open conversations on one channel are joined; refusals change nothing.
import { describe, expect, it } from 'vitest';
import { useTestApp, type Org } from '../helpers/app.js';
import { makeDeal, makePipeline, makeTag } from '../helpers/factories.js';
import { addMember, eventTypes, inbound, makeChannel, makeDepartment, makeUser, nextMobile } from '../messaging/helpers.js';

const api = useTestApp();

let ids = 1502576394658000;
const nextBsuid = () => `BR.${ids++}`;

const merge = (org: Org | string, id: string, source_id: unknown) =>
  api.rest('POST', `/backend/leads/${id}/merge`, { key: typeof org === 'string' ? org : org.key, body: { source_id } });

/** Every row of the organisation that names a lead, by table. */
async function pointingAt(tenantId: string, leadId: string) {
  const [row] = await api.db.sql.query<Record<string, number>>(
    `SELECT (SELECT count(*)::int FROM leads WHERE tenant_id = $1 AND id = $2::uuid) AS leads,
            (SELECT count(*)::int FROM conversations WHERE tenant_id = $1 AND lead_id = $2::uuid) AS conversations,
            (SELECT count(*)::int FROM messages WHERE tenant_id = $1 AND lead_id = $2::uuid) AS messages,
            (SELECT count(*)::int FROM deals WHERE tenant_id = $1 AND lead_id = $2::uuid) AS deals,
            (SELECT count(*)::int FROM lead_tags WHERE tenant_id = $1 AND lead_id = $2::uuid) AS lead_tags`,
    [tenantId, leadId],
  );
  return row;
}

/** What a refused merge must leave as it was. */
async function snapshot(tenantId: string) {
  return api.db.sql.query(
    `SELECT (SELECT json_agg(l ORDER BY id) FROM leads l WHERE tenant_id = $1) AS leads,
            (SELECT json_agg(c ORDER BY id) FROM conversations c WHERE tenant_id = $1) AS conversations,
            (SELECT json_agg(json_build_array(id, lead_id, conversation_id) ORDER BY id) FROM messages WHERE tenant_id = $1) AS messages,
            (SELECT count(*)::int FROM events WHERE tenant_id = $1) AS events`,
    [tenantId],
  );
}

describe('POST /backend/leads/{id}/merge', () => {
  it('moves conversations, messages, deals and tags, fills the missing fields, joins the open conversations and deletes the source', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    const [vip, quente] = [await makeTag(api, org, 'vip'), await makeTag(api, org, 'quente')];
    const phone = nextMobile();
    const bsuid = nextBsuid();
    // The same person, known twice: by phone, and by BSUID alone.
    const first = await inbound(api, org, channel.id, phone, 'Oi, sou a Ana', 'Ana');
    const second = await api.rest('POST', `/backend/channels/${channel.id}/inbound`, {
      key: org.key,
      body: { user_id: bsuid, username: 'ana.souza', name: 'Ana S.', content: 'Oi de novo' },
    });
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    const source = second.body.data.lead;
    await api.rest('PUT', `/backend/leads/${first.lead.id}`, {
      key: org.key,
      body: { tag_ids: [vip.id], custom_fields: { plano: 'ouro' } },
    });
    await api.rest('PUT', `/backend/leads/${source.id}`, {
      key: org.key,
      body: { email: 'ana@acme.com', company: 'Acme', tag_ids: [vip.id, quente.id], custom_fields: { plano: 'prata', cidade: 'BH' } },
    });
    const p = await makePipeline(api, org);
    const deal = await makeDeal(api, org, { pipeline_id: p.id, stage_id: p.entrada, lead_id: source.id });
    const typesBefore = await eventTypes(api, org.tenantId);

    const r = await merge(org, first.lead.id, source.id);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({
      success: true,
      data: expect.objectContaining({
        id: first.lead.id,
        name: 'Ana',
        phone,
        whatsapp_user_id: bsuid,
        whatsapp_username: 'ana.souza',
        email: 'ana@acme.com',
        company: 'Acme',
        custom_fields: { plano: 'ouro', cidade: 'BH' },
      }),
    });
    expect(r.body.data.tags.map((t: { name: string }) => t.name).sort()).toEqual(['quente', 'vip']);

    expect(await pointingAt(org.tenantId, source.id)).toEqual({ leads: 0, conversations: 0, messages: 0, deals: 0, lead_tags: 0 });
    expect((await api.rest('GET', `/backend/leads/${source.id}`, { key: org.key })).status).toBe(404);
    // One open conversation, with both messages and both unread counts.
    const conversations = (await api.rest('GET', '/backend/conversations', { key: org.key })).body.data;
    expect(conversations).toHaveLength(1);
    expect(conversations[0]).toMatchObject({
      id: first.conversation.id,
      lead: { id: first.lead.id, phone },
      unread_count: 2,
      status: 'active',
      last_message: { content: 'Oi de novo', role: 'user' },
    });
    const history = (await api.rest('GET', `/backend/leads/${first.lead.id}/messages`, { key: org.key })).body.data;
    expect(history.map((m: { content: string; conversation_id: string }) => [m.content, m.conversation_id])).toEqual([
      ['Oi, sou a Ana', first.conversation.id],
      ['Oi de novo', first.conversation.id],
    ]);
    const moved = await api.rest('GET', `/backend/pipeline/deals/${deal.id}`, { key: org.key });
    expect(moved.body).toMatchObject({ lead_id: first.lead.id, lead_name: 'Ana' });
    expect((await eventTypes(api, org.tenantId)).length - typesBefore.length).toBe(2);
    const [merged] = await api.db.sql.query<{ data: any }>(`SELECT data FROM events WHERE tenant_id = $1 AND type = 'lead.merged'`, [
      org.tenantId,
    ]);
    expect(merged.data).toMatchObject({ id: first.lead.id, source_id: source.id, whatsapp_user_id: bsuid });

    // The next message from either identity reaches the one lead.
    const later = await api.rest('POST', `/backend/channels/${channel.id}/inbound`, {
      key: org.key,
      body: { user_id: bsuid, content: 'Ainda eu' },
    });
    expect(later.body.data.lead.id).toBe(first.lead.id);
    expect(later.body.data.conversation.id).toBe(first.conversation.id);
  });

  it('archives the source’s open conversation when it is on another channel, and works over GraphQL', async () => {
    const org = await api.newOrg();
    const [one, two] = [await makeChannel(api, org, { name: 'Um' }), await makeChannel(api, org, { name: 'Dois' })];
    const a = await inbound(api, org, one.id, nextMobile(), 'Pelo canal um');
    const b = await inbound(api, org, two.id, nextMobile(), 'Pelo canal dois');
    const r = await api.raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
      body: JSON.stringify({
        query: 'mutation($id: UUID!, $source: UUID!) { mergeLead(id: $id, source_id: $source) { id phone } }',
        variables: { id: a.lead.id, source: b.lead.id },
      }),
    });
    const body = await r.json();
    expect(body.errors).toBeUndefined();
    expect(body.data.mergeLead).toEqual({ id: a.lead.id, phone: a.lead.phone });
    const list = (await api.rest('GET', '/backend/conversations', { key: org.key })).body.data;
    expect(list.map((c: { id: string; status: string; lead: { id: string } }) => [c.id, c.status, c.lead.id]).sort()).toEqual(
      [
        [a.conversation.id, 'active', a.lead.id],
        [b.conversation.id, 'archived', a.lead.id],
      ].sort(),
    );
    expect(await pointingAt(org.tenantId, b.lead.id)).toEqual({ leads: 0, conversations: 0, messages: 0, deals: 0, lead_tags: 0 });
  });

  it('refuses the lead itself, unknown and foreign leads, and a conversation the operator cannot see, changing nothing', async () => {
    const org = await api.newOrg();
    const other = await api.newOrg('Outra');
    const channel = await makeChannel(api, org);
    const a = await inbound(api, org, channel.id, nextMobile());
    const b = await inbound(api, org, channel.id, nextMobile());
    const foreign = await inbound(api, other, (await makeChannel(api, other)).id, nextMobile());
    const before = await snapshot(org.tenantId);

    const self = await merge(org, a.lead.id, a.lead.id);
    expect(self.status).toBe(400);
    expect(self.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'source_id', message: expect.any(String) }] });
    expect((await merge(org, a.lead.id, '00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await merge(org, a.lead.id, foreign.lead.id)).status).toBe(404);
    expect((await merge(org, foreign.lead.id, a.lead.id)).status).toBe(404);
    expect((await merge(other, foreign.lead.id, a.lead.id)).status).toBe(404);
    expect((await merge(org, a.lead.id, 'nope')).status).toBe(400);
    expect(await snapshot(org.tenantId)).toEqual(before);

    // An operator outside the department of the source's conversation cannot join it into a conversation.
    const sales = await makeDepartment(api, org, 'Vendas');
    await api.rest('PUT', `/backend/conversations/${b.conversation.id}`, { key: org.key, body: { department_id: sales.id } });
    const operator = await makeUser(api, org, 'operator');
    const support = await makeDepartment(api, org, 'Suporte');
    await addMember(api, org, support.id, operator.id);
    const beforeOperator = await snapshot(org.tenantId);
    const hidden = await merge(operator.key, a.lead.id, b.lead.id);
    expect(hidden.status).toBe(404);
    expect(hidden.body.error.message).toMatch(/Conversa/);
    expect(await snapshot(org.tenantId)).toEqual(beforeOperator);
    expect((await api.rest('GET', `/backend/leads/${b.lead.id}`, { key: org.key })).status).toBe(200);
  });
});
