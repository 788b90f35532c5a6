import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { addMember, inbound, makeChannel, makeDepartment, makeUser, nextMobile } from './helpers.js';

const api = useTestApp();

async function eventsOf(tenantId: string) {
  return api.db.sql.query<{ type: string; data: any }>('SELECT type, data FROM events WHERE tenant_id = $1 ORDER BY created_at, type', [
    tenantId,
  ]);
}

describe('inbound messages', () => {
  it('creates the lead, the open conversation with the channel’s department and the message, in the envelope {lead, conversation, message}', async () => {
    const org = await api.newOrg();
    const dept = await makeDepartment(api, org, 'Vendas');
    const channel = await makeChannel(api, org, { department_id: dept.id });
    const phone = nextMobile();
    const r = await api.rest('POST', `/backend/channels/${channel.id}/inbound`, {
      key: org.key,
      body: { from: phone.slice(1), content: 'Olá, quero um orçamento', name: 'Maria' },
    });
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    const { lead, conversation, message } = r.body.data;
    expect(lead).toMatchObject({ id: expect.any(String), name: 'Maria', phone, status: null, tags: [], custom_fields: {} });
    expect(conversation).toMatchObject({
      id: expect.any(String),
      lead: { id: lead.id, name: 'Maria', phone },
      last_message: { content: 'Olá, quero um orçamento', role: 'user', timestamp: message.timestamp },
      unread_count: 1,
      status: 'active',
      department_id: dept.id,
      channel_id: channel.id,
    });
    expect(message).toEqual({
      id: expect.any(String),
      lead_id: lead.id,
      conversation_id: conversation.id,
      channel_id: channel.id,
      content: 'Olá, quero um orçamento',
      type: 'text',
      role: 'user',
      status: 'received',
      error: null,
      provider_message_id: null,
      media_url: null,
      template_id: null,
      timestamp: expect.any(String),
    });

    // The same phone again: same lead, same open conversation, one more unread message.
    const second = await inbound(
      api,
      org,
      channel.id,
      `+${phone.slice(1, 3)} (${phone.slice(3, 5)}) ${phone.slice(5, 10)}-${phone.slice(10)}`,
      'Alguém aí?',
      'Outro nome',
    );
    expect(second.lead).toMatchObject({ id: lead.id, name: 'Maria' });
    expect(second.conversation).toMatchObject({
      id: conversation.id,
      unread_count: 2,
      last_message: { content: 'Alguém aí?', role: 'user' },
    });

    const events = await eventsOf(org.tenantId);
    expect(events.map((e) => e.type).sort()).toEqual(['conversation.created', 'lead.created', 'message.received', 'message.received']);
    expect(events.find((e) => e.type === 'lead.created')!.data).toMatchObject({ id: lead.id, phone, name: 'Maria' });
    expect(events.find((e) => e.type === 'conversation.created')!.data).toMatchObject({
      id: conversation.id,
      lead: { id: lead.id },
      department_id: dept.id,
    });
    expect(
      events
        .filter((e) => e.type === 'message.received')
        .map((e) => e.data.content)
        .sort(),
    ).toEqual(['Alguém aí?', 'Olá, quero um orçamento']);
  });

  it('uses the existing lead of a phone and names a new lead by its phone when no name is given', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    const phone = nextMobile();
    const lead = await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'João', phone } });
    const r = await inbound(api, org, channel.id, phone);
    expect(r.lead).toMatchObject({ id: lead.body.data.id, name: 'João' });
    // Only the API's creation of the lead raised lead.created: the inbound message found the lead.
    expect((await eventsOf(org.tenantId)).filter((e) => e.type === 'lead.created').map((e) => e.data.id)).toEqual([lead.body.data.id]);
    const unnamed = await inbound(api, org, channel.id, nextMobile());
    expect(unnamed.lead.name).toBe(unnamed.lead.phone);
  });

  it('refuses bad input with VALIDATION_ERROR and stores nothing', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    for (const body of [
      { from: '1234567', content: 'x' },
      { from: '+123 4567', content: 'x' },
      { from: 'abc12345678', content: 'x' },
      { from: '1234567890123456', content: 'x' },
      { from: '05511988887777', content: 'x' },
      { from: '', content: 'x' },
      { from: nextMobile(), content: '' },
      { from: nextMobile(), content: '   ' },
      { from: nextMobile(), content: 'x'.repeat(4097) },
      { from: nextMobile() },
      { content: 'x' },
      { from: 5511988887777, content: 'x' },
      { from: nextMobile(), content: 'x', name: 'n'.repeat(256) },
    ]) {
      const r = await api.rest('POST', `/backend/channels/${channel.id}/inbound`, { key: org.key, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe('VALIDATION_ERROR');
    }
    expect((await api.rest('GET', '/backend/leads', { key: org.key })).body.data).toEqual([]);
    expect(await eventsOf(org.tenantId)).toEqual([]);
  });

  it('answers 404 for an unknown channel or another organisation’s', async () => {
    const org = await api.newOrg();
    const other = await api.newOrg();
    const theirs = await makeChannel(api, other);
    const phone = nextMobile();
    const r = await api.rest('POST', `/backend/channels/${theirs.id}/inbound`, { key: org.key, body: { from: phone, content: 'x' } });
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('NOT_FOUND');
    expect(
      (
        await api.rest('POST', '/backend/channels/00000000-0000-4000-8000-000000000000/inbound', {
          key: org.key,
          body: { from: phone, content: 'x' },
        })
      ).status,
    ).toBe(404);
    expect((await api.rest('GET', '/backend/leads', { key: org.key })).body.data).toEqual([]);
    expect((await api.rest('GET', '/backend/leads', { key: other.key })).body.data).toEqual([]);
  });

  it('takes an operator’s key into the conversations the operator sees; any other is 404 with nothing stored', async () => {
    const org = await api.newOrg();
    const mine = await makeDepartment(api, org, 'Suporte');
    const theirs = await makeDepartment(api, org, 'Vendas');
    const operator = await makeUser(api, org, 'operator');
    await addMember(api, org, mine.id, operator.id);
    const open = await makeChannel(api, org);
    const ours = await makeChannel(api, org, { department_id: mine.id });
    const hidden = await makeChannel(api, org, { department_id: theirs.id });
    const post = (channelId: string, from: string) =>
      api.rest('POST', `/backend/channels/${channelId}/inbound`, { key: operator.key, body: { from, content: 'oi' } });

    expect((await post(open.id, nextMobile())).status).toBe(200);
    const r = await post(ours.id, nextMobile());
    expect(r.status).toBe(200);
    expect(r.body.data.conversation.department_id).toBe(mine.id);

    const before = await eventsOf(org.tenantId);
    const refused = await post(hidden.id, nextMobile());
    expect(refused.status).toBe(404);
    expect(refused.body.error.code).toBe('NOT_FOUND');
    // A known lead whose open conversation is in another department: refused too, and nothing moves.
    const known = await inbound(api, org, hidden.id, nextMobile(), 'do dono');
    expect((await post(open.id, known.lead.phone)).status).toBe(404);
    expect((await eventsOf(org.tenantId)).length).toBe(before.length + 3); // only the owner's inbound: lead, conversation, message
    const [counts] = await api.db.sql.query<{ leads: number; messages: number }>(
      'SELECT (SELECT count(*)::int FROM leads WHERE tenant_id = $1) AS leads, (SELECT count(*)::int FROM messages WHERE tenant_id = $1) AS messages',
      [org.tenantId],
    );
    expect(counts).toEqual({ leads: 3, messages: 3 });
  });

  it('opens a new conversation once the previous one is archived', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    const phone = nextMobile();
    const first = await inbound(api, org, channel.id, phone);
    expect(
      (await api.rest('PUT', `/backend/conversations/${first.conversation.id}`, { key: org.key, body: { status: 'archived' } })).status,
    ).toBe(200);
    const second = await inbound(api, org, channel.id, phone);
    expect(second.conversation.id).not.toBe(first.conversation.id);
    expect(second.conversation.unread_count).toBe(1);
    expect(second.lead.id).toBe(first.lead.id);
  });

  it('creates one lead and one open conversation when messages from a new phone arrive at once', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    const phone = nextMobile();
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        api.rest('POST', `/backend/channels/${channel.id}/inbound`, { key: org.key, body: { from: phone, content: `m${i}` } }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(new Set(answers.map((a) => a.body.data.lead.id)).size).toBe(1);
    expect(new Set(answers.map((a) => a.body.data.conversation.id)).size).toBe(1);
    const [counts] = await api.db.sql.query<{ leads: number; conversations: number; messages: number; unread: number }>(
      `SELECT (SELECT count(*)::int FROM leads WHERE tenant_id = $1) AS leads,
              (SELECT count(*)::int FROM conversations WHERE tenant_id = $1) AS conversations,
              (SELECT count(*)::int FROM messages WHERE tenant_id = $1) AS messages,
              (SELECT sum(unread_count)::int FROM conversations WHERE tenant_id = $1) AS unread`,
      [org.tenantId],
    );
    expect(counts).toEqual({ leads: 1, conversations: 1, messages: 6, unread: 6 });
    const types = (await eventsOf(org.tenantId)).map((e) => e.type);
    expect(types.filter((t) => t === 'lead.created')).toHaveLength(1);
    expect(types.filter((t) => t === 'conversation.created')).toHaveLength(1);
    expect(types.filter((t) => t === 'message.received')).toHaveLength(6);
  });
});
