// conversationUpdated over server-sent events on a real socket: a new message (inbound and sent), read,
// archived, reopened and assigned each arrive with the conversation as its REST read shows it, to the
// subscribers whose department rules let them see it (admins and owners see all), as membership stands
// after a change of it; another organisation hears nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/http/server.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { listenOnSocket, subscribeSse, type SseStream } from '../helpers/sse.js';
import { addMember, inbound, makeChannel, makeDepartment, makeUser, nextMobile, send } from './helpers.js';

const api = useTestApp();

const QUERY = `subscription { conversationUpdated { kind conversation {
  id lead { id name phone whatsapp_user_id whatsapp_username } last_message { content role timestamp } unread_count window_expires_at status department_id channel_id assignee_id assignee { id name } first_response_at waiting_since created_at updated_at } } }`;

interface Change {
  kind: 'message' | 'read' | 'archived' | 'reopened' | 'assigned';
  conversation: {
    id: string;
    department_id: string | null;
    unread_count: number;
    status: string;
    last_message: { content: string } | null;
  } & Record<string, unknown>;
}

let server: RunningServer;
const streams: SseStream<unknown>[] = [];
beforeAll(async () => {
  server = await listenOnSocket(api);
});
afterAll(async () => {
  await Promise.all(streams.map((s) => s.close()));
  await server?.close();
});

/** A registered subscriber: an inbound message on `channelId` (one it can see) has reached it. */
async function subscriber(key: string, org: Org, channelId: string) {
  const stream = await subscribeSse<Change>(server.url, key, QUERY);
  streams.push(stream);
  expect(stream.status).toBe(200);
  let n = 0;
  const marker = `probe ${Math.random().toString(36).slice(2)}`;
  await stream.ready(
    () => inbound(api, org, channelId, nextMobile(), `${marker} ${++n}`),
    (c) => !!c.conversation.last_message?.content.startsWith(marker),
  );
  return stream;
}

const put = (org: Org, id: string, body: Record<string, unknown>) =>
  api.rest('PUT', `/backend/conversations/${id}`, { key: org.key, body });
const kindsOf = (s: SseStream<Change>, id: string) => s.received.filter((c) => c.conversation.id === id).map((c) => c.kind);

describe('conversationUpdated', () => {
  it('streams each kind of change, within department visibility, and only the organisation’s', async () => {
    const org = await api.newOrg();
    const other = await api.newOrg();
    const A = await makeDepartment(api, org, 'A');
    const B = await makeDepartment(api, org, 'B');
    const open = await makeChannel(api, org);
    const inA = await makeChannel(api, org, { department_id: A.id });
    const op0 = await makeUser(api, org, 'operator');
    const op1 = await makeUser(api, org, 'operator');
    const admin = await makeUser(api, org, 'admin');
    await addMember(api, org, A.id, op1.id);
    const otherChannel = await makeChannel(api, other);

    const subs = {
      owner: await subscriber(org.key, org, open.id),
      admin: await subscriber(admin.key, org, open.id),
      op0: await subscriber(op0.key, org, open.id),
      op1: await subscriber(op1.key, org, open.id),
      stranger: await subscriber(other.key, other, otherChannel.id),
    };

    // In department A: the owner, the admin and op1 see it; op0 does not.
    const first = await inbound(api, org, inA.id, nextMobile(), 'olá A', 'Bia');
    const id = first.conversation.id;
    const arrived = await subs.op1.until((c) => c.conversation.id === id, 'message in A');
    expect(arrived).toMatchObject({
      kind: 'message',
      conversation: {
        department_id: A.id,
        unread_count: 1,
        status: 'active',
        last_message: { content: 'olá A', role: 'user' },
        lead: { name: 'Bia' },
      },
    });
    const rest = await api.rest('GET', `/backend/conversations/${id}`, { key: org.key });
    expect(arrived.conversation).toEqual(rest.body.data);

    await send(api, org.key, { lead_id: first.lead.id, content: 'resposta' });
    expect((await put(org, id, { read: true })).status).toBe(200);
    expect((await put(org, id, { status: 'archived' })).status).toBe(200);
    expect((await put(org, id, { status: 'active' })).status).toBe(200);
    await subs.op1.until((c) => c.conversation.id === id && c.kind === 'reopened', 'reopened');
    expect(kindsOf(subs.op1, id)).toEqual(['message', 'message', 'read', 'archived', 'reopened']);
    const [, sent, read, archived] = subs.op1.received.filter((c) => c.conversation.id === id);
    expect(sent.conversation).toMatchObject({ last_message: { content: 'resposta', role: 'assistant' }, unread_count: 1 });
    expect(read.conversation.unread_count).toBe(0);
    expect(archived.conversation.status).toBe('archived');

    // Assigned to B: op1 no longer sees it (nor its assignment); op0 does once it joins B.
    expect((await put(org, id, { department_id: B.id })).status).toBe(200);
    await subs.owner.until((c) => c.conversation.id === id && c.kind === 'assigned', 'assigned');
    await addMember(api, org, B.id, op0.id);
    await inbound(api, org, inA.id, first.lead.phone, 'de novo');
    const seen = await subs.op0.until((c) => c.conversation.id === id, 'op0 after joining B');
    expect(seen).toMatchObject({ kind: 'message', conversation: { department_id: B.id, last_message: { content: 'de novo' } } });

    // A last change everyone in the organisation sees: once it has arrived, so has everything before it.
    const last = await inbound(api, org, open.id, nextMobile(), 'fim');
    for (const name of ['owner', 'admin', 'op0', 'op1'] as const)
      await subs[name].until((c) => c.conversation.id === last.conversation.id, `fim for ${name}`);
    const all = ['message', 'message', 'read', 'archived', 'reopened', 'assigned', 'message'];
    expect(kindsOf(subs.owner, id)).toEqual(all);
    expect(kindsOf(subs.admin, id)).toEqual(all);
    expect(kindsOf(subs.op1, id)).toEqual(['message', 'message', 'read', 'archived', 'reopened']);
    expect(kindsOf(subs.op0, id)).toEqual(['message']);

    const mine = new Set([id, last.conversation.id]);
    expect(subs.stranger.received.filter((c) => mine.has(c.conversation.id))).toEqual([]);
    for (const s of Object.values(subs)) expect(s.errors).toEqual([]);
  });

  it('needs messages.view', async () => {
    const org = await api.newOrg();
    const refused = await subscribeSse<Change>(server.url, await api.keyFor(org, 'owner', ['leads.view']), QUERY);
    streams.push(refused);
    while (!refused.completed) await new Promise((r) => setTimeout(r, 20));
    expect(refused.errors).toMatchObject([{ extensions: { code: 'FORBIDDEN' } }]);
  });
});
