// Who answers a conversation, over REST and GraphQL: assignment by hand (who may be assigned, capacity,
// conversation.assigned, the assignee filter), first_response_at and waiting_since, users' availability,
// and department routing (round_robin, balanced, capacity, the queue handed out when someone comes
// online or frees capacity), run by the conversations.route queue.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routingQueue } from '../../src/domains/messaging/routing.js';
import { runJobs, type JobRunner } from '../../src/jobs/runner.js';
import { graphql } from '../gql/index.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { addMember, inbound, makeChannel, makeUser, nextMobile, send, type UserWithKey } from './helpers.js';

const api = useTestApp();

let runner: JobRunner;
beforeAll(async () => {
  runner = await runJobs(api.db, { queues: [routingQueue({ db: api.db, config: api.config })], pollMs: 100 });
});
afterAll(async () => {
  await runner?.stop({ timeoutMs: 2_000 });
});

const AssignGql = graphql(`
  mutation AssignConversation($id: UUID!, $assignee_id: UUID) {
    updateConversation(id: $id, assignee_id: $assignee_id) {
      id
      assignee_id
      assignee {
        id
        name
      }
    }
  }
`);

const MineGql = graphql(`
  query MyConversations {
    conversations(assignee_id: "me") {
      data {
        id
        assignee {
          name
        }
      }
    }
  }
`);

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const put = (key: string, path: string, body: unknown) => api.rest('PUT', `/backend${path}`, { key, body });
const conversation = async (org: Org, id: string) => (await api.rest('GET', `/backend/conversations/${id}`, { key: org.key })).body.data;
const assigneeOf = async (org: Org, id: string) => (await conversation(org, id)).assignee_id as string | null;

/** An organisation with a department (routing as given), a channel into it and `members` operators in it. */
async function setup(routing: 'manual' | 'round_robin' | 'balanced', members = 2) {
  const org = await api.newOrg();
  const dept = await api.rest('POST', '/backend/departments', { key: org.key, body: { name: 'Vendas', routing } });
  expect(dept.status, JSON.stringify(dept.body)).toBe(201);
  expect(dept.body.routing).toBe(routing);
  const channel = await makeChannel(api, org, { department_id: dept.body.id });
  const users: UserWithKey[] = [];
  for (let i = 0; i < members; i++) {
    const user = await makeUser(api, org, 'operator');
    await addMember(api, org, dept.body.id, user.id);
    users.push(user);
  }
  return { org, department: dept.body as { id: string }, channel, users };
}

const online = (user: UserWithKey) => put(user.key, '/me/availability', { availability: 'online' });

describe('assignment by hand', () => {
  it('assigns a user who sees the conversation, filters by assignee, unassigns, with conversation.assigned each time', async () => {
    const { org, channel, users } = await setup('manual');
    const [ana] = users;
    const outsider = await makeUser(api, org, 'operator');
    const admin = await makeUser(api, org, 'admin');
    const { conversation: c } = await inbound(api, org, channel.id, nextMobile(), 'Oi');
    expect(await conversation(org, c.id)).toMatchObject({ assignee_id: null, assignee: null, first_response_at: null });

    const assigned = await put(org.key, `/conversations/${c.id}`, { assignee_id: ana.id });
    expect(assigned.status, JSON.stringify(assigned.body)).toBe(200);
    expect(assigned.body.data).toMatchObject({ assignee_id: ana.id, assignee: { id: ana.id, name: expect.any(String) } });
    // An operator outside the department would not see it; an admin sees everything.
    const refused = await put(org.key, `/conversations/${c.id}`, { assignee_id: outsider.id });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('assignee_id');
    expect((await put(org.key, `/conversations/${c.id}`, { assignee_id: crypto.randomUUID() })).status).toBe(400);
    const foreign = await api.newOrg();
    expect((await put(org.key, `/conversations/${c.id}`, { assignee_id: foreign.userId })).status).toBe(400);
    expect(await assigneeOf(org, c.id)).toBe(ana.id);

    const mine = await api.rest('GET', '/backend/conversations?assignee_id=me', { key: ana.key });
    expect(mine.body.data.map((x: any) => x.id)).toEqual([c.id]);
    expect((await api.rest('GET', '/backend/conversations?assignee_id=none', { key: org.key })).body.data).toEqual([]);
    expect((await api.rest('GET', `/backend/conversations?assignee_id=${ana.id}`, { key: org.key })).body.data).toHaveLength(1);
    expect((await api.rest('GET', '/backend/conversations?assignee_id=someone', { key: org.key })).status).toBe(400);
    const gqlMine = await api.gql(MineGql, {}, ana.key);
    expect(gqlMine.data!.conversations.data).toEqual([{ id: c.id, assignee: { name: expect.any(String) } }]);

    const moved = await api.gql(AssignGql, { id: c.id, assignee_id: admin.id }, org.key);
    expect(moved.errors).toBeUndefined();
    expect(moved.data!.updateConversation).toMatchObject({ assignee_id: admin.id, assignee: { id: admin.id } });
    expect((await put(org.key, `/conversations/${c.id}`, { assignee_id: null })).body.data.assignee).toBeNull();
    const events = await api.db.sql.query<{ data: any }>(
      `SELECT data FROM events WHERE tenant_id = $1::uuid AND type = 'conversation.assigned' ORDER BY created_at`,
      [org.tenantId],
    );
    expect(events.map((e) => [e.data.assignee_id, e.data.previous_assignee_id])).toEqual([
      [ana.id, null],
      [admin.id, ana.id],
      [null, admin.id],
    ]);
  });

  it('keeps an operator within the assignee’s capacity, and lets an owner go past it', async () => {
    const { org, channel, users } = await setup('manual');
    const [ana, bia] = users;
    expect((await put(org.key, `/users/${ana.id}`, { capacity: 1 })).body.data).toMatchObject({ capacity: 1, availability: 'offline' });
    expect((await put(org.key, `/users/${ana.id}`, { capacity: -1 })).status).toBe(400);
    const first = await inbound(api, org, channel.id, nextMobile(), 'Oi');
    const second = await inbound(api, org, channel.id, nextMobile(), 'Olá');
    expect((await put(bia.key, `/conversations/${first.conversation.id}`, { assignee_id: ana.id })).status).toBe(200);
    const over = await put(bia.key, `/conversations/${second.conversation.id}`, { assignee_id: ana.id });
    expect(over.status).toBe(400);
    expect(over.body.error.message).toContain('capacidade 1');
    expect((await put(org.key, `/conversations/${second.conversation.id}`, { assignee_id: ana.id })).status).toBe(200);
  });

  it('records the first response and how long the customer waits', async () => {
    const { org, channel } = await setup('manual', 0);
    const first = await inbound(api, org, channel.id, nextMobile(), 'Oi');
    const waiting = await conversation(org, first.conversation.id);
    expect(waiting.waiting_since).toEqual(expect.any(String));
    await inbound(api, org, channel.id, first.lead.phone, 'Alguém aí?');
    expect((await conversation(org, first.conversation.id)).waiting_since).toBe(waiting.waiting_since);
    await send(api, org.key, { lead_id: first.lead.id, content: 'Olá! Como posso ajudar?' });
    const answered = await conversation(org, first.conversation.id);
    expect(answered).toMatchObject({ waiting_since: null, first_response_at: expect.any(String) });
    await send(api, org.key, { lead_id: first.lead.id, content: 'Mais uma coisa' });
    expect((await conversation(org, first.conversation.id)).first_response_at).toBe(answered.first_response_at);
    await inbound(api, org, channel.id, first.lead.phone, 'Obrigado');
    expect((await conversation(org, first.conversation.id)).waiting_since).toEqual(expect.any(String));
  });
});

describe('department routing', () => {
  it('round_robin hands new conversations to the online members in turn', async () => {
    const { org, channel, users } = await setup('round_robin', 3);
    const [ana, bia, caio] = users;
    await online(ana);
    await online(bia); // caio stays offline
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push((await inbound(api, org, channel.id, nextMobile(), `Oi ${i}`)).conversation.id);
      await until(
        `conversation ${i} assigned`,
        () => assigneeOf(org, ids[i]),
        (a) => a !== null,
      );
    }
    const assignees = await Promise.all(ids.map((id) => assigneeOf(org, id)));
    expect(new Set(assignees)).toEqual(new Set([ana.id, bia.id]));
    expect(assignees[0]).not.toBe(assignees[1]);
    expect(assignees[2]).toBe(assignees[0]);
    expect(assignees[3]).toBe(assignees[1]);
    expect(assignees).not.toContain(caio.id);
  });

  it('balanced gives each new conversation to the member with the fewest open ones', async () => {
    const { org, channel, users } = await setup('balanced');
    const [ana, bia] = users;
    // Ana already answers two conversations (by hand), Bia none.
    for (let i = 0; i < 2; i++) {
      const { conversation: c } = await inbound(api, org, channel.id, nextMobile(), 'Oi');
      expect((await put(org.key, `/conversations/${c.id}`, { assignee_id: ana.id })).status).toBe(200);
    }
    await online(ana);
    await online(bia);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await inbound(api, org, channel.id, nextMobile(), 'Olá')).conversation.id);
      await until(
        'assigned',
        () => assigneeOf(org, ids[i]),
        (a) => a !== null,
      );
    }
    // Bia (0) takes one, then another (1 against 2); then they are even at 2 and Ana, longer since her
    // last assignment by routing (never), takes the third.
    expect(await Promise.all(ids.map((id) => assigneeOf(org, id)))).toEqual([bia.id, bia.id, ana.id]);
  });

  it('queues conversations while nobody can take them, and hands out the oldest when someone comes online or frees capacity', async () => {
    const { org, channel, users } = await setup('round_robin', 1);
    const [ana] = users;
    expect((await put(org.key, `/users/${ana.id}`, { capacity: 1 })).status).toBe(200);
    const older = await inbound(api, org, channel.id, nextMobile(), 'Primeiro');
    const newer = await inbound(api, org, channel.id, nextMobile(), 'Segundo');
    await new Promise((r) => setTimeout(r, 300));
    expect(await assigneeOf(org, older.conversation.id)).toBeNull();
    const me = await online(ana);
    expect(me.body.data).toMatchObject({ availability: 'online', capacity: 1 });
    await until(
      'the oldest handed out',
      () => assigneeOf(org, older.conversation.id),
      (a) => a === ana.id,
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(await assigneeOf(org, newer.conversation.id)).toBeNull(); // at capacity
    expect((await put(ana.key, `/conversations/${older.conversation.id}`, { status: 'archived' })).status).toBe(200);
    await until(
      'the next handed out',
      () => assigneeOf(org, newer.conversation.id),
      (a) => a === ana.id,
    );
    // Away: new conversations wait again.
    expect((await put(ana.key, '/me/availability', { availability: 'away' })).body.data.availability).toBe('away');
    expect((await put(ana.key, '/me/availability', { availability: 'busy' })).status).toBe(400);
    const later = await inbound(api, org, channel.id, nextMobile(), 'Terceiro');
    await new Promise((r) => setTimeout(r, 300));
    expect(await assigneeOf(org, later.conversation.id)).toBeNull();
    expect((await api.rest('GET', '/backend/me', { key: ana.key })).body.data.user).toMatchObject({ availability: 'away', capacity: 1 });
  });
});
