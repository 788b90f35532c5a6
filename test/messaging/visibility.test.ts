// Operator visibility (spec rules 1 and 2) on every read and write of conversations and messages:
// operators in 0, 1 and 2 departments × conversations with no department, one of theirs and another
// department's × list, detail, history, update and send, on REST and GraphQL. Changes of membership
// apply to the next request.
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp, type Org } from '../helpers/app.js';
import { addMember, inbound, makeChannel, makeDepartment, makeUser, nextMobile, type UserWithKey } from './helpers.js';

const api = useTestApp();

type Case = 'none' | 'A' | 'B' | 'C';
const CASES: Case[] = ['none', 'A', 'B', 'C'];

let org: Org;
const depts = {} as Record<'A' | 'B' | 'C', { id: string }>;
const channels = {} as Record<Case, { id: string }>;
const operators = {} as Record<'op0' | 'op1' | 'op2', UserWithKey>;
let admin: UserWithKey;
const talks = {} as Record<Case, { lead: { id: string }; conversation: { id: string } }>;

/** Who sees what: op0 is in no department, op1 in A, op2 in A and B. C is nobody's. */
const SEES: Record<keyof typeof operators, Case[]> = { op0: ['none'], op1: ['none', 'A'], op2: ['none', 'A', 'B'] };

beforeAll(async () => {
  org = await api.newOrg();
  for (const d of ['A', 'B', 'C'] as const) depts[d] = await makeDepartment(api, org, `Dept ${d}`);
  for (const c of CASES)
    channels[c] = await makeChannel(api, org, { name: `Canal ${c}`, ...(c === 'none' ? {} : { department_id: depts[c].id }) });
  operators.op0 = await makeUser(api, org, 'operator');
  operators.op1 = await makeUser(api, org, 'operator');
  operators.op2 = await makeUser(api, org, 'operator');
  admin = await makeUser(api, org, 'admin');
  await addMember(api, org, depts.A.id, operators.op1.id);
  await addMember(api, org, depts.A.id, operators.op2.id);
  await addMember(api, org, depts.B.id, operators.op2.id);
  for (const c of CASES) talks[c] = await inbound(api, org, channels[c].id, nextMobile(), `mensagem ${c}`);
});

const gql = async (key: string, query: string, variables: Record<string, unknown> = {}) => {
  const r = await api.raw('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query, variables }),
  });
  return r.json();
};

describe('operator visibility', () => {
  for (const name of ['op0', 'op1', 'op2'] as const) {
    describe(`${name} (departments: ${SEES[name].filter((c) => c !== 'none').join(', ') || 'none'})`, () => {
      it('lists only visible conversations, on REST and GraphQL', async () => {
        const key = operators[name].key;
        const list = await api.rest('GET', '/backend/conversations?limit=100', { key });
        const visibleIds = SEES[name].map((c) => talks[c].conversation.id).sort();
        expect(list.body.data.map((c: { id: string }) => c.id).sort()).toEqual(visibleIds);
        expect(list.body.pagination.total).toBe(visibleIds.length);
        const graph = await gql(key, '{ conversations(limit: 100) { data { id } pagination { total } } }');
        expect(graph.data.conversations.data.map((c: { id: string }) => c.id).sort()).toEqual(visibleIds);
        expect(graph.data.conversations.pagination.total).toBe(visibleIds.length);
      });

      for (const c of CASES) {
        const visible = SEES[name].includes(c);
        it(`${visible ? 'reaches' : 'cannot reach'} the conversation of ${c === 'none' ? 'no department' : `department ${c}`}`, async () => {
          const key = operators[name].key;
          const { conversation, lead } = talks[c];

          const detail = await api.rest('GET', `/backend/conversations/${conversation.id}`, { key });
          expect(detail.status).toBe(visible ? 200 : 404);
          if (!visible) expect(detail.body.error.code).toBe('NOT_FOUND');

          const byLead = await api.rest('GET', `/backend/conversations?lead_id=${lead.id}`, { key });
          expect(byLead.body.data.length).toBe(visible ? 1 : 0);

          const history = await api.rest('GET', `/backend/leads/${lead.id}/messages`, { key });
          expect(history.status).toBe(200);
          expect(history.body.data.map((m: { content: string }) => m.content)).toEqual(
            visible ? expect.arrayContaining([`mensagem ${c}`]) : [],
          );
          expect(history.body.pagination.total).toBe(visible ? history.body.data.length : 0);

          const graphLead = await gql(key, 'query($lead: UUID!) { lead(id: $lead) { conversations { totalCount nodes { id } } } }', {
            lead: lead.id,
          });
          expect(graphLead.data.lead.conversations.nodes.map((x: { id: string }) => x.id)).toEqual(visible ? [conversation.id] : []);
          expect(graphLead.data.lead.conversations.totalCount).toBe(visible ? 1 : 0);
          const graph = await gql(key, 'query($id: UUID!) { conversation(id: $id) { id } }', { id: conversation.id });
          if (visible) expect(graph.data.conversation.id).toBe(conversation.id);
          else expect(graph.errors[0].extensions.code).toBe('NOT_FOUND');

          const before = (await api.rest('GET', `/backend/conversations/${conversation.id}`, { key: org.key })).body.data;
          const update = await api.rest('PUT', `/backend/conversations/${conversation.id}`, { key, body: { read: true } });
          expect(update.status).toBe(visible ? 200 : 404);
          const after = (await api.rest('GET', `/backend/conversations/${conversation.id}`, { key: org.key })).body.data;
          expect(after.unread_count).toBe(visible ? 0 : before.unread_count);
          // Restore for the other operators' checks.
          if (visible)
            await inbound(
              api,
              org,
              channels[c].id,
              (await api.rest('GET', `/backend/leads/${lead.id}`, { key: org.key })).body.data.phone,
              `mensagem ${c}`,
            );

          const messagesBefore = (await api.rest('GET', `/backend/leads/${lead.id}/messages?limit=100`, { key: org.key })).body.pagination
            .total;
          const sent = await api.rest('POST', '/backend/messages/send', {
            key,
            body: { lead_id: lead.id, content: `resposta de ${name}` },
          });
          expect(sent.status).toBe(visible ? 200 : 404);
          if (visible) expect(sent.body.data.conversation_id).toBe(conversation.id);
          const messagesAfter = (await api.rest('GET', `/backend/leads/${lead.id}/messages?limit=100`, { key: org.key })).body.pagination
            .total;
          expect(messagesAfter).toBe(messagesBefore + (visible ? 1 : 0));
        });
      }
    });
  }

  it('shows owners and admins every conversation', async () => {
    for (const key of [org.key, admin.key]) {
      const list = await api.rest('GET', '/backend/conversations?limit=100', { key });
      expect(list.body.pagination.total).toBe(4);
    }
  });

  it('does not let an operator open a conversation in a department they are not in', async () => {
    const lead = (await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'Novo', phone: nextMobile() } })).body.data;
    const refused = await api.rest('POST', '/backend/messages/send', {
      key: operators.op1.key,
      body: { lead_id: lead.id, content: 'x', channel_id: channels.C.id },
    });
    expect(refused.status).toBe(404);
    expect((await api.rest('GET', `/backend/conversations?lead_id=${lead.id}`, { key: org.key })).body.data).toEqual([]);
    const allowed = await api.rest('POST', '/backend/messages/send', {
      key: operators.op1.key,
      body: { lead_id: lead.id, content: 'x', channel_id: channels.A.id },
    });
    expect(allowed.status).toBe(200);
    expect(
      (await api.rest('GET', `/backend/conversations/${allowed.body.data.conversation_id}`, { key: org.key })).body.data.department_id,
    ).toBe(depts.A.id);
  });

  it('follows membership and department changes at once', async () => {
    const op = operators.op0;
    const target = talks.C.conversation.id;
    expect((await api.rest('GET', `/backend/conversations/${target}`, { key: op.key })).status).toBe(404);
    await addMember(api, org, depts.C.id, op.id);
    expect((await api.rest('GET', `/backend/conversations/${target}`, { key: op.key })).status).toBe(200);
    expect((await api.rest('DELETE', `/backend/departments/${depts.C.id}/members/${op.id}`, { key: org.key })).status).toBe(204);
    expect((await api.rest('GET', `/backend/conversations/${target}`, { key: op.key })).status).toBe(404);

    // An operator may hand a conversation over to another department, and then no longer sees it.
    const mine = talks.none.conversation.id;
    const moved = await api.rest('PUT', `/backend/conversations/${mine}`, { key: op.key, body: { department_id: depts.B.id } });
    expect(moved.status).toBe(200);
    expect((await api.rest('GET', `/backend/conversations/${mine}`, { key: op.key })).status).toBe(404);
    expect((await api.rest('GET', `/backend/conversations/${mine}`, { key: operators.op2.key })).status).toBe(200);
    // Deleting department B brings it back to everyone.
    await api.rest('PUT', `/backend/conversations/${mine}`, { key: org.key, body: { department_id: null } });
    expect((await api.rest('GET', `/backend/conversations/${mine}`, { key: op.key })).status).toBe(200);
  });
});
