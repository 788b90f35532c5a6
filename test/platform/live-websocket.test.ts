// Subscriptions over WebSocket (graphql-ws' graphql-transport-ws protocol) on a real socket: the key in
// connectionParams; dealChanged and conversationUpdated arrive as over SSE, within department
// visibility; a missing, wrong or revoked key closes the socket (4401); queries are refused there; a
// key holds a bounded number of sockets and subscriptions (SSE and WebSocket together). graphql-sse's
// single connection mode serves the same subscriptions, its tokens the key's own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/http/server.js';
import { graphqlSseSingleConnection } from '../../src/http/graphql-sse.js';
import { KEY_CHECK_MS, LiveSubscriptions } from '../../src/http/live-subscriptions.js';
import type { TenantViewer } from '../../src/auth/viewer.js';
import { useTestApp, type TestClient } from '../helpers/app.js';
import { dealRequests, makeOrgWithPipeline, type OrgWithPipeline } from '../helpers/factories.js';
import { listenOnSocket, subscribeSse, subscribeSseSingle, type SseStream } from '../helpers/sse.js';
import { subscribeWs, wsClient } from '../helpers/ws.js';
import { DEAL_CHANGED, type DealChangeEvent } from '../deals/live-queries.js';
import { addMember, inbound, makeChannel, makeDepartment, makeUser, nextMobile } from '../messaging/helpers.js';

const api = useTestApp();
const bounded = useTestApp({ LIVE_SUBSCRIPTIONS_PER_KEY: '2' });

const servers: RunningServer[] = [];
const streams: SseStream<unknown>[] = [];
let server: RunningServer;
beforeAll(async () => {
  server = await listenOnSocket(api);
  servers.push(server);
});
afterAll(async () => {
  await Promise.all(streams.map((s) => s.close()));
  await Promise.all(servers.map((s) => s.close()));
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what: string, done: () => boolean, timeoutMs = 15_000) {
  const started = Date.now();
  while (!done()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** A dealChanged subscriber over WebSocket, registered: a probe deal's edits reach it. */
async function dealSubscriber(client: TestClient, url: string, setup: OrgWithPipeline, key = setup.org.key) {
  const { newDeal, put } = dealRequests(client, setup);
  const probe = await newDeal({ note: 'probe' });
  const stream = subscribeWs<DealChangeEvent>(url, key, DEAL_CHANGED, { pipeline_id: setup.p.id });
  streams.push(stream);
  let n = 0;
  await stream.ready(
    () => put(probe.id, { note: `probe ${++n}` }),
    (e) => e.deal_id === probe.id,
  );
  return stream;
}

describe('subscriptions over WebSocket', () => {
  it('streams dealChanged with the key in connectionParams', async () => {
    const setup = await makeOrgWithPipeline(api, { name: 'Ana' });
    const stream = await dealSubscriber(api, server.url, setup);
    const { newDeal, move } = dealRequests(api, setup);
    const deal = await newDeal({ value: 120 });
    const created = await stream.until((e) => e.deal_id === deal.id && e.kind === 'created', 'created');
    expect(created.deal).toMatchObject({ id: deal.id, lead_name: 'Ana' });
    expect((await move(deal.id, { stage_id: setup.p.andamento })).status).toBe(200);
    await stream.until((e) => e.deal_id === deal.id && e.kind === 'moved', 'moved');
    expect(stream.errors).toEqual([]);
  });

  it('streams conversationUpdated within department visibility', async () => {
    const org = await api.newOrg();
    const A = await makeDepartment(api, org, 'A');
    const open = await makeChannel(api, org);
    const inA = await makeChannel(api, org, { department_id: A.id });
    const outsider = await makeUser(api, org, 'operator');
    const member = await makeUser(api, org, 'operator');
    await addMember(api, org, A.id, member.id);
    const QUERY = 'subscription { conversationUpdated { kind conversation { id department_id last_message { content } } } }';
    type Change = { kind: string; conversation: { id: string; department_id: string | null; last_message: { content: string } | null } };
    const subscribe = async (key: string) => {
      const stream = subscribeWs<Change>(server.url, key, QUERY);
      streams.push(stream);
      const marker = `probe ${Math.random().toString(36).slice(2)}`;
      let n = 0;
      await stream.ready(
        () => inbound(api, org, open.id, nextMobile(), `${marker} ${++n}`),
        (c) => !!c.conversation.last_message?.content.startsWith(marker),
      );
      return stream;
    };
    const outside = await subscribe(outsider.key);
    const inside = await subscribe(member.key);
    const first = await inbound(api, org, inA.id, nextMobile(), 'olá A', 'Bia');
    await inside.until((c) => c.conversation.id === first.conversation.id, 'the member’s conversation');
    // A later change the outsider can see has arrived after it: the one in A was never sent.
    const later = await inbound(api, org, open.id, nextMobile(), 'depois');
    await outside.until((c) => c.conversation.id === later.conversation.id, 'the open conversation');
    expect(outside.received.some((c) => c.conversation.id === first.conversation.id)).toBe(false);
  });

  it('closes a socket without a valid key with 4401, and one for the platform token with 4403', async () => {
    const setup = await makeOrgWithPipeline(api);
    for (const key of [null, 'fnl_not-a-key', `${setup.org.key.slice(0, -4)}aaaa`]) {
      const stream = subscribeWs(server.url, key, DEAL_CHANGED, { pipeline_id: setup.p.id });
      await waitFor('the socket to close', () => !!stream.closed);
      expect(stream.closed!.code, String(key)).toBe(4401);
      expect(stream.received).toEqual([]);
    }
    const admin = subscribeWs(server.url, api.config.adminToken!, DEAL_CHANGED, { pipeline_id: setup.p.id });
    await waitFor('the socket to close', () => !!admin.closed);
    expect(admin.closed!.code).toBe(4403);
  });

  it('refuses queries and mutations over a socket, and another organisation’s pipeline', async () => {
    const setup = await makeOrgWithPipeline(api);
    const other = await makeOrgWithPipeline(api);
    const query = subscribeWs(server.url, setup.org.key, '{ tags { id } }');
    streams.push(query);
    await waitFor('the refusal', () => query.completed);
    expect(query.errors[0]).toMatchObject({ extensions: { code: 'INVALID_INPUT' } });
    const foreign = subscribeWs(server.url, setup.org.key, DEAL_CHANGED, { pipeline_id: other.p.id });
    streams.push(foreign);
    await waitFor('the refusal', () => foreign.completed);
    expect(foreign.errors[0]).toMatchObject({ extensions: { code: 'NOT_FOUND' } });
  });

  it('closes the socket of a revoked key (4401) and ends its subscriptions', async () => {
    const setup = await makeOrgWithPipeline(api);
    const admin = await makeUser(api, setup.org, 'admin');
    const stream = await dealSubscriber(api, server.url, setup, admin.key);
    const keys = await api.rest('GET', '/backend/api-keys', { key: setup.org.key });
    const adminKey = (keys.body.data as { id: string; user_id: string }[]).find((k) => k.user_id === admin.id)!;
    expect((await api.rest('POST', `/backend/api-keys/${adminKey.id}/revoke`, { key: setup.org.key })).status).toBe(200);
    await waitFor('the socket to close', () => !!stream.closed, KEY_CHECK_MS + 10_000);
    expect(stream.closed!.code).toBe(4401);
  });

  it('bounds a key’s sockets and subscriptions (WebSocket and SSE together)', async () => {
    const boundedServer = await listenOnSocket(bounded);
    servers.push(boundedServer);
    const setup = await makeOrgWithPipeline(bounded);
    const one = await dealSubscriber(bounded, boundedServer.url, setup);
    const two = await dealSubscriber(bounded, boundedServer.url, setup);
    // A third socket for the key: closed at once.
    const third = subscribeWs(boundedServer.url, setup.org.key, DEAL_CHANGED, { pipeline_id: setup.p.id });
    await waitFor('the third socket to close', () => !!third.closed);
    expect(third.closed!.code).toBe(4429);
    // A third subscription over SSE: refused with RATE_LIMITED.
    const sse = await subscribeSse(boundedServer.url, setup.org.key, DEAL_CHANGED, { pipeline_id: setup.p.id });
    streams.push(sse);
    await waitFor('the refusal', () => sse.completed || sse.errors.length > 0);
    expect(sse.errors[0]).toMatchObject({ extensions: { code: 'RATE_LIMITED' } });
    // Ending one frees its place.
    await one.close();
    await waitFor('a place', () => bounded.app.live.counts().streams < 2);
    const again = await dealSubscriber(bounded, boundedServer.url, setup);
    expect(again.closed).toBeUndefined();
    expect(two.closed).toBeUndefined();
  });

  it('keeps a socket open with several subscriptions, each completed on its own', async () => {
    const setup = await makeOrgWithPipeline(api);
    const closed: { code: number }[] = [];
    const client = wsClient(server.url, setup.org.key, (c) => closed.push(c));
    const got: string[][] = [[], []];
    const { newDeal } = dealRequests(api, setup);
    const dispose = [0, 1].map((i) =>
      client.subscribe<{ dealChanged: DealChangeEvent }>(
        { query: DEAL_CHANGED, variables: { pipeline_id: setup.p.id } },
        { next: (v) => got[i].push(v.data!.dealChanged.deal_id), error: () => {}, complete: () => {} },
      ),
    );
    let deal = await newDeal({});
    for (let n = 0; n < 50 && !(got[0].includes(deal.id) && got[1].includes(deal.id)); n++) {
      await sleep(100);
      if (n % 10 === 9) deal = await newDeal({});
    }
    expect(got[0]).toContain(deal.id);
    expect(got[1]).toContain(deal.id);
    dispose[0]();
    const after = await newDeal({});
    await waitFor('the second subscription', () => got[1].includes(after.id));
    expect(got[0]).not.toContain(after.id);
    expect(closed).toEqual([]);
    await client.dispose();
  });
});

describe('subscriptions in graphql-sse’s single connection mode', () => {
  it('streams dealChanged and conversationUpdated within department visibility', async () => {
    const setup = await makeOrgWithPipeline(api, { name: 'Ana' });
    const { newDeal, put } = dealRequests(api, setup);
    const probe = await newDeal({ note: 'probe' });
    const deals = subscribeSseSingle<DealChangeEvent>(server.url, setup.org.key, DEAL_CHANGED, { pipeline_id: setup.p.id });
    streams.push(deals);
    let n = 0;
    await deals.ready(
      () => put(probe.id, { note: `probe ${++n}` }),
      (e) => e.deal_id === probe.id,
    );
    const deal = await newDeal({ value: 5 });
    await deals.until((e) => e.deal_id === deal.id && e.kind === 'created', 'created');

    const org = setup.org;
    const A = await makeDepartment(api, org, 'A');
    const open = await makeChannel(api, org);
    const inA = await makeChannel(api, org, { department_id: A.id });
    const outsider = await makeUser(api, org, 'operator');
    type Change = { conversation: { id: string; last_message: { content: string } | null } };
    const outside = subscribeSseSingle<Change>(
      server.url,
      outsider.key,
      'subscription { conversationUpdated { conversation { id last_message { content } } } }',
    );
    streams.push(outside);
    const marker = `probe ${Math.random().toString(36).slice(2)}`;
    let m = 0;
    await outside.ready(
      () => inbound(api, org, open.id, nextMobile(), `${marker} ${++m}`),
      (c) => !!c.conversation.last_message?.content.startsWith(marker),
    );
    const hidden = await inbound(api, org, inA.id, nextMobile(), 'em A');
    const later = await inbound(api, org, open.id, nextMobile(), 'depois');
    await outside.until((c) => c.conversation.id === later.conversation.id, 'the open conversation');
    expect(outside.received.some((c) => c.conversation.id === hidden.conversation.id)).toBe(false);
  });

  it('keeps a reserved stream to the key that reserved it', async () => {
    const one = await api.newOrg();
    const two = await api.newOrg();
    const put = await fetch(`${server.url}/graphql`, { method: 'PUT', headers: { authorization: `Bearer ${one.key}` } });
    expect(put.status).toBe(201);
    const token = await put.text();
    const foreign = await fetch(`${server.url}/graphql`, {
      headers: { authorization: `Bearer ${two.key}`, accept: 'text/event-stream', 'x-graphql-event-stream-token': token },
    });
    expect(foreign.status).toBe(404);
    await foreign.body?.cancel();
    const anonymous = await fetch(`${server.url}/graphql`, { method: 'PUT' });
    expect(anonymous.status).toBe(401);
  });

  it('drops a reserved stream its client never opens, and frees its place', async () => {
    const live = new LiveSubscriptions(api.db.prisma, 1);
    const single = graphqlSseSingleConnection({ getEnveloped: () => expect.fail('nothing runs'), live }, 50);
    const viewer = { kind: 'user', tenantId: 't', userId: 'u', role: 'owner', apiKeyId: 'k', permissions: new Set(), narrowed: false };
    const reserve = () => single.handle(new Request('http://funil/graphql', { method: 'PUT' }), viewer as TenantViewer, 'r');
    const first = await reserve();
    expect(first.status).toBe(201);
    const token = await first.text();
    expect((await reserve()).status).toBe(429);
    await sleep(150);
    const open = await single.handle(
      new Request('http://funil/graphql', { headers: { accept: 'text/event-stream', 'x-graphql-event-stream-token': token } }),
      viewer as TenantViewer,
      'r',
    );
    expect(open.status).toBe(404);
    const again = await reserve();
    expect(again.status).toBe(201);
    single.close();
  });
});
