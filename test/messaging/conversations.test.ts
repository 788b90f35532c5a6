import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { inbound, makeChannel, makeDepartment, nextMobile } from './helpers.js';

const api = useTestApp();

describe('conversations', () => {
  it('lists the conversations, latest activity first, with pagination and filters', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    const a = await inbound(api, org, channel.id, nextMobile(), 'primeira', 'Ana');
    const b = await inbound(api, org, channel.id, nextMobile(), 'segunda', 'Bruno');
    await inbound(api, org, channel.id, a.lead.phone, 'terceira');

    const r = await api.rest('GET', '/backend/conversations', { key: org.key });
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    expect(r.body.pagination).toEqual({ total: 2, limit: 20, offset: 0, has_more: false, next_cursor: null });
    expect(r.body.data.map((c: { id: string }) => c.id)).toEqual([a.conversation.id, b.conversation.id]);
    expect(r.body.data[0]).toMatchObject({
      id: a.conversation.id,
      lead: { id: a.lead.id, name: 'Ana', phone: a.lead.phone },
      last_message: { content: 'terceira', role: 'user', timestamp: expect.any(String) },
      unread_count: 2,
      status: 'active',
      updated_at: expect.any(String),
    });
    // The lead as the list item shows it (who it is and how WhatsApp knows them), not the whole lead.
    expect(r.body.data[0].lead).toEqual({
      id: a.lead.id,
      name: 'Ana',
      phone: a.lead.phone,
      whatsapp_user_id: null,
      whatsapp_username: null,
    });

    const page = await api.rest('GET', '/backend/conversations?limit=1&offset=1', { key: org.key });
    expect(page.body.pagination).toEqual({ total: 2, limit: 1, offset: 1, has_more: false, next_cursor: null });
    expect(page.body.data.map((c: { id: string }) => c.id)).toEqual([b.conversation.id]);
    expect((await api.rest('GET', '/backend/conversations?limit=1', { key: org.key })).body.pagination.has_more).toBe(true);
    // Out of range falls back to 20; 100 is the maximum.
    expect((await api.rest('GET', '/backend/conversations?limit=101', { key: org.key })).body.pagination.limit).toBe(20);
    expect((await api.rest('GET', '/backend/conversations?limit=0', { key: org.key })).body.pagination.limit).toBe(20);
    expect((await api.rest('GET', '/backend/conversations?limit=100', { key: org.key })).body.pagination.limit).toBe(100);

    const byLead = await api.rest('GET', `/backend/conversations?lead_id=${b.lead.id}`, { key: org.key });
    expect(byLead.body.data.map((c: { id: string }) => c.id)).toEqual([b.conversation.id]);
    await api.rest('PUT', `/backend/conversations/${b.conversation.id}`, { key: org.key, body: { status: 'archived' } });
    const archived = await api.rest('GET', '/backend/conversations?status=archived', { key: org.key });
    expect(archived.body.data.map((c: { id: string }) => c.id)).toEqual([b.conversation.id]);
    expect(
      (await api.rest('GET', '/backend/conversations?status=active', { key: org.key })).body.data.map((c: { id: string }) => c.id),
    ).toEqual([a.conversation.id]);

    for (const query of ['limit=abc', 'offset=1.5', 'status=open', 'lead_id=nope']) {
      const bad = await api.rest('GET', `/backend/conversations?${query}`, { key: org.key });
      expect(bad.status, query).toBe(400);
      expect(bad.body.error.code).toBe('VALIDATION_ERROR');
    }
  });

  it('reads and updates one conversation: status, department and read', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    const dept = await makeDepartment(api, org, 'Suporte');
    const { conversation, lead } = await inbound(api, org, channel.id, nextMobile());
    await inbound(api, org, channel.id, lead.phone, 'de novo');

    const one = await api.rest('GET', `/backend/conversations/${conversation.id}`, { key: org.key });
    expect(one.status).toBe(200);
    expect(one.body.data).toMatchObject({ id: conversation.id, unread_count: 2, department_id: null, lead: { id: lead.id } });

    const read = await api.rest('PUT', `/backend/conversations/${conversation.id}`, { key: org.key, body: { read: true } });
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ unread_count: 0, last_message: { content: 'de novo' } });
    const moved = await api.rest('PUT', `/backend/conversations/${conversation.id}`, {
      key: org.key,
      body: { department_id: dept.id, status: 'archived' },
    });
    expect(moved.body.data).toMatchObject({ department_id: dept.id, status: 'archived' });
    expect(
      (await api.rest('PUT', `/backend/conversations/${conversation.id}`, { key: org.key, body: { department_id: null } })).body.data
        .department_id,
    ).toBeNull();
    expect((await api.rest('PUT', `/backend/conversations/${conversation.id}`, { key: org.key, body: {} })).body.data.id).toBe(
      conversation.id,
    );

    // A new open conversation for the lead: reopening the archived one is a conflict.
    const newer = await inbound(api, org, channel.id, lead.phone);
    expect(newer.conversation.id).not.toBe(conversation.id);
    const reopen = await api.rest('PUT', `/backend/conversations/${conversation.id}`, { key: org.key, body: { status: 'active' } });
    expect(reopen.status).toBe(409);
    expect(reopen.body.error.code).toBe('CONFLICT');

    for (const body of [{ read: false }, { status: 'open' }, { status: null }, { department_id: 'x' }, { read: 'yes' }]) {
      const bad = await api.rest('PUT', `/backend/conversations/${conversation.id}`, { key: org.key, body });
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body.error.code).toBe('VALIDATION_ERROR');
    }
    const unknownDept = await api.rest('PUT', `/backend/conversations/${conversation.id}`, {
      key: org.key,
      body: { department_id: '00000000-0000-4000-8000-000000000000' },
    });
    expect(unknownDept.status).toBe(404);
    const missing = await api.rest('GET', '/backend/conversations/00000000-0000-4000-8000-000000000000', { key: org.key });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('NOT_FOUND');
  });

  it('clears the department of conversations when the department is deleted', async () => {
    const org = await api.newOrg();
    const dept = await makeDepartment(api, org, 'Vendas');
    const channel = await makeChannel(api, org, { department_id: dept.id });
    const { conversation } = await inbound(api, org, channel.id, nextMobile());
    expect(conversation.department_id).toBe(dept.id);
    await api.rest('DELETE', `/backend/departments/${dept.id}`, { key: org.key });
    expect((await api.rest('GET', `/backend/conversations/${conversation.id}`, { key: org.key })).body.data.department_id).toBeNull();
  });

  it('keeps history when the channel is deleted', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    const { conversation, lead } = await inbound(api, org, channel.id, nextMobile());
    await api.rest('DELETE', `/backend/channels/${channel.id}`, { key: org.key });
    expect((await api.rest('GET', `/backend/conversations/${conversation.id}`, { key: org.key })).body.data).toMatchObject({
      channel_id: null,
      last_message: { content: 'Olá' },
    });
    expect((await api.rest('GET', `/backend/leads/${lead.id}/messages`, { key: org.key })).body.data).toEqual([
      expect.objectContaining({ content: 'Olá', channel_id: null }),
    ]);
  });

  it('deletes a lead’s conversations and messages with the lead', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    const { lead, conversation } = await inbound(api, org, channel.id, nextMobile());
    const deleted = await api.rest('DELETE', `/backend/leads/${lead.id}`, { key: org.key });
    expect(deleted.status).toBe(200);
    expect((await api.rest('GET', `/backend/conversations/${conversation.id}`, { key: org.key })).status).toBe(404);
    const [left] = await api.db.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM messages WHERE tenant_id = $1', [org.tenantId]);
    expect(left.n).toBe(0);
  });

  it('gives a lead’s message history newest last, paged back from the newest', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    const phone = nextMobile();
    const first = await inbound(api, org, channel.id, phone, 'm1');
    for (const text of ['m2', 'm3', 'm4']) await inbound(api, org, channel.id, phone, text);
    await api.rest('PUT', `/backend/conversations/${first.conversation.id}`, { key: org.key, body: { status: 'archived' } });
    await inbound(api, org, channel.id, phone, 'm5');
    const other = await inbound(api, org, channel.id, nextMobile(), 'de outro lead');

    const all = await api.rest('GET', `/backend/leads/${first.lead.id}/messages`, { key: org.key });
    expect(all.status).toBe(200);
    expect(all.body.success).toBe(true);
    expect(all.body.data.map((m: { content: string }) => m.content)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
    expect(all.body.pagination).toEqual({ total: 5, limit: 20, offset: 0, has_more: false });
    expect(all.body.data[0]).toMatchObject({
      lead_id: first.lead.id,
      conversation_id: first.conversation.id,
      role: 'user',
      type: 'text',
      status: 'received',
    });

    const newest = await api.rest('GET', `/backend/leads/${first.lead.id}/messages?limit=2`, { key: org.key });
    expect(newest.body.data.map((m: { content: string }) => m.content)).toEqual(['m4', 'm5']);
    expect(newest.body.pagination).toEqual({ total: 5, limit: 2, offset: 0, has_more: true });
    const older = await api.rest('GET', `/backend/leads/${first.lead.id}/messages?limit=2&offset=2`, { key: org.key });
    expect(older.body.data.map((m: { content: string }) => m.content)).toEqual(['m2', 'm3']);

    expect(
      (await api.rest('GET', `/backend/leads/${other.lead.id}/messages`, { key: org.key })).body.data.map(
        (m: { content: string }) => m.content,
      ),
    ).toEqual(['de outro lead']);
    const unknown = await api.rest('GET', '/backend/leads/00000000-0000-4000-8000-000000000000/messages', { key: org.key });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');
    expect((await api.rest('GET', `/backend/leads/${first.lead.id}/messages?limit=x`, { key: org.key })).status).toBe(400);
  });

  it('keeps organisations apart', async () => {
    const org = await api.newOrg();
    const other = await api.newOrg();
    const theirs = await inbound(api, other, (await makeChannel(api, other)).id, nextMobile(), 'segredo');
    await inbound(api, org, (await makeChannel(api, org)).id, nextMobile(), 'meu');
    expect((await api.rest('GET', `/backend/conversations/${theirs.conversation.id}`, { key: org.key })).status).toBe(404);
    expect((await api.rest('PUT', `/backend/conversations/${theirs.conversation.id}`, { key: org.key, body: { read: true } })).status).toBe(
      404,
    );
    expect((await api.rest('GET', `/backend/leads/${theirs.lead.id}/messages`, { key: org.key })).status).toBe(404);
    expect((await api.rest('GET', `/backend/conversations?lead_id=${theirs.lead.id}`, { key: org.key })).body.data).toEqual([]);
    const mine = await api.rest('GET', '/backend/conversations', { key: org.key });
    expect(mine.body.data.map((c: { last_message: { content: string } }) => c.last_message.content)).toEqual(['meu']);
    expect((await api.rest('GET', `/backend/conversations/${theirs.conversation.id}`, { key: other.key })).body.data.unread_count).toBe(1);
  });

  it('serves the graph: Lead.conversations, Conversation.lead (its details: the whole lead) and Conversation.messages newest last', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    const phone = nextMobile();
    const { lead, conversation } = await inbound(api, org, channel.id, phone, 'um', 'Carla');
    await inbound(api, org, channel.id, phone, 'dois');
    await inbound(api, org, channel.id, phone, 'três');
    const r = await api.raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
      body: JSON.stringify({
        query: `query($id: UUID!) { lead(id: $id) { name conversations { totalCount nodes { id unread_count lead { name phone details { id tags { name } } }
          messages(last: 2) { edges { node { content role } } pageInfo { hasPreviousPage } } } } } }`,
        variables: { id: lead.id },
      }),
    });
    const body = await r.json();
    expect(body.errors).toBeUndefined();
    expect(body.data.lead).toEqual({
      name: 'Carla',
      conversations: {
        totalCount: 1,
        nodes: [
          {
            id: conversation.id,
            unread_count: 3,
            lead: { name: 'Carla', phone, details: { id: lead.id, tags: [] } },
            messages: {
              edges: [{ node: { content: 'dois', role: 'user' } }, { node: { content: 'três', role: 'user' } }],
              pageInfo: { hasPreviousPage: true },
            },
          },
        ],
      },
    });
  });
});
