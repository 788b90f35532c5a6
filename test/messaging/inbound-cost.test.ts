// What an inbound message costs in SQL statements per request (the API key's lookup, the transaction's
// statements and its COMMIT), for a new sender and a known one, and that its answer, built from what the
// transaction read and returned, is what the reads return. Live subscribers are served from the
// announcement: more subscribers, however many messages, cost no statement.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/http/server.js';
import { useTestApp } from '../helpers/app.js';
import { makeStatus, makeTag } from '../helpers/factories.js';
import { listenOnSocket, subscribeSse, type SseStream } from '../helpers/sse.js';
import { addMember, makeChannel, makeDepartment, makeUser, nextMobile } from './helpers.js';

const api = useTestApp();

let server: RunningServer;
const streams: SseStream<any>[] = [];
beforeAll(async () => {
  server = await listenOnSocket(api);
});
afterAll(async () => {
  await Promise.all(streams.map((s) => s.close()));
  await server?.close();
});

describe('the cost of an inbound message', () => {
  it('is at most 8 statements for a new sender and 5 for a known one, and answers what the reads return', async () => {
    const org = await api.newOrg();
    const dept = await makeDepartment(api, org, 'Vendas');
    const channel = await makeChannel(api, org, { department_id: dept.id });
    const post = (from: string, content: string, key = org.key) =>
      api.rest('POST', `/backend/channels/${channel.id}/inbound`, { key, body: { from, content, name: 'Maria' } });
    // The first request of a process prepares what every later one reuses.
    expect((await post(nextMobile(), 'aquecimento')).status).toBe(200);

    const phone = nextMobile();
    let first: any;
    const newSender = await api.countStatements(async () => (first = await post(phone, 'primeira')));
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.data.lead).toEqual((await api.rest('GET', `/backend/leads/${first.body.data.lead.id}`, { key: org.key })).body.data);
    expect(first.body.data.conversation).toEqual(
      (await api.rest('GET', `/backend/conversations/${first.body.data.conversation.id}`, { key: org.key })).body.data,
    );
    let second: any;
    const knownSender = await api.countStatements(async () => (second = await post(phone, 'segunda')));
    expect(second.status).toBe(200);
    expect(newSender).toBeLessThanOrEqual(8);
    expect(knownSender).toBeLessThanOrEqual(5);

    // A known lead with a status and tags: the answer's lead is the lead's own read.
    const status = await makeStatus(api, org);
    const tags = [await makeTag(api, org, 'quente'), await makeTag(api, org, 'b2b')];
    const lead = first.body.data.lead;
    const put = await api.rest('PUT', `/backend/leads/${lead.id}`, {
      key: org.key,
      body: { status_id: status.id, tag_ids: tags.map((t) => t.id), email: 'maria@example.com' },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    let third: any;
    const withTags = await api.countStatements(async () => (third = await post(phone, 'terceira')));
    expect(withTags).toBeLessThanOrEqual(5);
    const { data } = third.body;
    expect(data.lead).toEqual((await api.rest('GET', `/backend/leads/${lead.id}`, { key: org.key })).body.data);
    expect(data.lead.tags.map((t: any) => t.name)).toEqual(['b2b', 'quente']);
    expect(data.conversation).toEqual(
      (await api.rest('GET', `/backend/conversations/${data.conversation.id}`, { key: org.key })).body.data,
    );
    expect(data.conversation).toMatchObject({
      unread_count: 3,
      department_id: dept.id,
      last_message: { content: 'terceira', timestamp: data.message.timestamp },
    });
    const history = await api.rest('GET', `/backend/leads/${lead.id}/messages`, { key: org.key });
    expect(history.body.data.at(-1)).toEqual(data.message);

    // An operator of the department: the same cost (its visibility is checked in the same statements).
    const operator = await makeUser(api, org, 'operator');
    await addMember(api, org, dept.id, operator.id);
    let fourth: any;
    const asOperator = await api.countStatements(async () => (fourth = await post(phone, 'quarta', operator.key)));
    expect(fourth.status).toBe(200);
    expect(asOperator).toBeLessThanOrEqual(5);

    // The events carry the same lead, conversation and messages.
    const events = await api.db.sql.query<{ type: string; data: any }>(
      'SELECT type, data FROM events WHERE tenant_id = $1 ORDER BY created_at, type',
      [org.tenantId],
    );
    const created = events.find((e) => e.type === 'lead.created' && e.data.id === lead.id)!.data;
    expect(created).toEqual({ ...lead, created_at: lead.created_at, updated_at: lead.updated_at });
    const opened = events.find((e) => e.type === 'conversation.created' && e.data.id === first.body.data.conversation.id)!.data;
    expect(opened).toEqual({
      ...first.body.data.conversation,
      last_message: null,
      unread_count: 0,
      window_expires_at: null,
      waiting_since: null,
    });
    const received = events.filter((e) => e.type === 'message.received' && e.data.lead_id === lead.id).map((e) => e.data);
    expect(received).toEqual(expect.arrayContaining([first.body.data.message, second.body.data.message, data.message]));
    const [jobs] = await api.db.sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM jobs WHERE queue = 'events.dispatch' AND payload->>'tenant_id' = $1`,
      [org.tenantId],
    );
    // Each event has its dispatch job, unless a runner already took it.
    expect(jobs.n).toBeLessThanOrEqual(events.length);
  });

  it('serves subscribers from the announcement: more subscribers cost no statement, whatever the number of messages', async () => {
    const org = await api.newOrg();
    const A = await makeDepartment(api, org, 'A');
    const B = await makeDepartment(api, org, 'B');
    const channels = {
      none: await makeChannel(api, org),
      A: await makeChannel(api, org, { department_id: A.id }),
      B: await makeChannel(api, org, { department_id: B.id }),
    };
    const operators = [await makeUser(api, org, 'operator'), await makeUser(api, org, 'operator'), await makeUser(api, org, 'operator')];
    await addMember(api, org, A.id, operators[0].id);
    await addMember(api, org, B.id, operators[1].id);
    let n = 0;
    const post = (channelId: string, content: string) =>
      api.rest('POST', `/backend/channels/${channelId}/inbound`, { key: org.key, body: { from: nextMobile(), content } });

    const MESSAGES = 'subscription { messageAdded { id content conversation_id } }';
    const CONVERSATIONS = 'subscription { conversationUpdated { kind conversation { id department_id last_message { content } } } }';
    const content = (e: any): string | undefined => e.content ?? e.conversation?.last_message?.content;
    let subscribers: SseStream<any>[] = [];
    /** A subscriber registered: a message every subscriber sees (no department) has reached it. */
    const subscribe = async (key: string, query: string) => {
      const stream = await subscribeSse<any>(server.url, key, query);
      streams.push(stream);
      expect(stream.status).toBe(200);
      await stream.ready(
        () => post(channels.none.id, `probe ${++n}`),
        (e) => String(content(e)).startsWith('probe'),
      );
      subscribers.push(stream);
      return stream;
    };
    /** M messages over the three channels in turn, then one all see, until every subscriber has that one. */
    const burst = async (m: number) =>
      api.countStatements(async () => {
        const tag = `burst ${++n}`;
        for (let i = 0; i < m; i++)
          expect((await post([channels.A.id, channels.B.id, channels.none.id][i % 3], `${tag} ${i}`)).status).toBe(200);
        const last = `${tag} fim`;
        expect((await post(channels.none.id, last)).status).toBe(200);
        for (const s of subscribers) await s.until((e) => content(e) === last, last);
      });

    // Subscribers read their departments when they start; the bursts follow at once.
    const lone = await subscribe(operators[0].key, MESSAGES);
    const oneSubscriber = await burst(6);
    await lone.close();
    subscribers = [];
    for (const op of operators) await subscribe(op.key, MESSAGES);
    for (const op of operators) await subscribe(op.key, CONVERSATIONS);
    await subscribe(org.key, MESSAGES);
    await subscribe(org.key, CONVERSATIONS);
    const eightSubscribers = await burst(6);
    expect(eightSubscribers).toBe(oneSubscriber);

    // And each saw only what it may: operator 0 (department A) never a message of department B.
    const seen = (s: SseStream<any>) => s.received.map(content).filter((c) => String(c).startsWith(`burst ${n} `));
    for (const op0 of [subscribers[0], subscribers[3]]) {
      expect(seen(op0)).toEqual(expect.arrayContaining([`burst ${n} 0`, `burst ${n} 2`, `burst ${n} fim`]));
      expect(seen(op0)).not.toContain(`burst ${n} 1`);
    }
    expect(seen(subscribers[2]).sort()).toEqual([`burst ${n} 2`, `burst ${n} 5`, `burst ${n} fim`]);
    expect(seen(subscribers[6])).toHaveLength(7);
    for (const s of subscribers) expect(s.errors).toEqual([]);
  });
});
