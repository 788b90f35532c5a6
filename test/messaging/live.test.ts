// The messageAdded subscription over server-sent events: each subscriber receives the new messages of
// the conversations it can see (the visibility matrix again), of its own organisation only, as
// membership stands when each message arrives; with REDIS_URL, a message stored through one server
// reaches the subscribers of another.
import { afterAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { ADMIN_TOKEN, useTestApp } from '../helpers/app.js';
import { addMember, inbound, makeChannel, makeDepartment, makeUser, nextMobile, send } from './helpers.js';

const api = useTestApp();
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const QUERY = 'subscription { messageAdded { id content role conversation_id lead_id } }';

interface Stream {
  /** Messages received so far. */
  received: { content: string; role: string; conversation_id: string }[];
  errors: unknown[];
  /** Resolves once a message with this content has arrived. */
  until(content: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const open: Stream[] = [];
afterAll(async () => {
  await Promise.all(open.map((s) => s.close()));
});

/** Subscribes over SSE (through `app`'s fetch handler) and collects the events in the background. */
async function subscribe(key: string | null, app: Pick<App, 'fetch'> = api.app): Promise<Stream & { status: number }> {
  const controller = new AbortController();
  const response = await app.fetch(
    new Request('http://funil.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify({ query: QUERY }),
      signal: controller.signal,
    }),
  );
  const stream: Stream & { status: number } = {
    status: response.status,
    received: [],
    errors: [],
    async until(content, timeoutMs = 10_000) {
      const started = Date.now();
      while (!stream.received.some((m) => m.content === content)) {
        if (Date.now() - started > timeoutMs)
          throw new Error(`no "${content}" after ${timeoutMs} ms; got ${JSON.stringify(stream.received)} ${JSON.stringify(stream.errors)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      controller.abort();
      await reader?.cancel().catch(() => {});
      await reading.catch(() => {});
    },
  };
  const streaming = response.body && response.headers.get('content-type')?.includes('text/event-stream');
  const reader = streaming ? response.body!.getReader() : undefined;
  const reading = (async () => {
    if (!reader) return;
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block.split('\n').find((l) => l.startsWith('data:'));
        if (!data || data.length <= 6) continue;
        const payload = JSON.parse(data.slice(5));
        if (payload.errors) stream.errors.push(...payload.errors);
        if (payload.data?.messageAdded) stream.received.push(payload.data.messageAdded);
      }
    }
  })();
  open.push(stream);
  // The subscription is registered once Yoga has started executing it; give it a moment.
  await new Promise((r) => setTimeout(r, 100));
  return stream;
}

const contents = (s: Stream) => s.received.map((m) => m.content).sort();

describe('messageAdded', () => {
  it('streams each subscriber the new messages of the conversations it can see, and only its organisation’s', async () => {
    const org = await api.newOrg();
    const other = await api.newOrg();
    const A = await makeDepartment(api, org, 'A');
    const B = await makeDepartment(api, org, 'B');
    const C = await makeDepartment(api, org, 'C');
    const channels = {
      none: await makeChannel(api, org),
      A: await makeChannel(api, org, { department_id: A.id }),
      B: await makeChannel(api, org, { department_id: B.id }),
      C: await makeChannel(api, org, { department_id: C.id }),
    };
    const op0 = await makeUser(api, org, 'operator');
    const op1 = await makeUser(api, org, 'operator');
    const op2 = await makeUser(api, org, 'operator');
    await addMember(api, org, A.id, op1.id);
    await addMember(api, org, A.id, op2.id);
    await addMember(api, org, B.id, op2.id);

    const subs = {
      owner: await subscribe(org.key),
      op0: await subscribe(op0.key),
      op1: await subscribe(op1.key),
      op2: await subscribe(op2.key),
      stranger: await subscribe(other.key),
    };
    for (const s of Object.values(subs)) expect(s.status).toBe(200);

    for (const c of ['none', 'A', 'B', 'C'] as const) await inbound(api, org, channels[c].id, nextMobile(), `msg ${c}`);
    const reply = await inbound(api, org, channels.A.id, nextMobile(), 'lead A2');
    await send(api, org.key, { lead_id: reply.lead.id, content: 'resposta A' });
    // A last message everyone in the organisation sees: once it has arrived, so has everything before it.
    await inbound(api, org, channels.none.id, nextMobile(), 'fim');
    for (const name of ['owner', 'op0', 'op1', 'op2'] as const) await subs[name].until('fim');

    expect(contents(subs.owner)).toEqual(['fim', 'lead A2', 'msg A', 'msg B', 'msg C', 'msg none', 'resposta A']);
    expect(contents(subs.op0)).toEqual(['fim', 'msg none']);
    expect(contents(subs.op1)).toEqual(['fim', 'lead A2', 'msg A', 'msg none', 'resposta A']);
    expect(contents(subs.op2)).toEqual(['fim', 'lead A2', 'msg A', 'msg B', 'msg none', 'resposta A']);
    expect(subs.owner.received.find((m) => m.content === 'resposta A')!.role).toBe('assistant');

    await inbound(api, other, (await makeChannel(api, other)).id, nextMobile(), 'outra org');
    await subs.stranger.until('outra org');
    expect(contents(subs.stranger)).toEqual(['outra org']);

    // Membership as it stands when the message arrives.
    await addMember(api, org, C.id, op0.id);
    await inbound(api, org, channels.C.id, nextMobile(), 'C depois');
    await subs.op0.until('C depois');
    for (const s of Object.values(subs)) expect(s.errors).toEqual([]);
  });

  it('refuses a caller without a key', async () => {
    const r = await api.raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: QUERY }),
    });
    expect(r.status).toBe(401);
  });

  it('crosses server processes through Redis when REDIS_URL is set, and only then', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    const serverApp = (env: Record<string, string>) =>
      createApp(loadConfig({ NODE_ENV: 'test', ADMIN_TOKEN, PUBLIC_BASE_URL: 'http://funil.test', ...env }), api.db);
    const call = (app: App, path: string, body: unknown) =>
      app.fetch(
        new Request(`http://funil.test${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
          body: JSON.stringify(body),
        }),
      );

    // Two servers sharing Redis: a message stored through one reaches a subscriber of the other.
    const one = serverApp({ REDIS_URL });
    const two = serverApp({ REDIS_URL });
    const onTwo = await subscribe(org.key, two);
    await new Promise((r) => setTimeout(r, 200)); // the Redis SUBSCRIBE round trip
    expect((await call(one, `/backend/channels/${channel.id}/inbound`, { from: nextMobile(), content: 'via redis' })).status).toBe(200);
    await onTwo.until('via redis');

    // Without Redis each server only hears itself.
    const three = serverApp({});
    const four = serverApp({});
    const onFour = await subscribe(org.key, four);
    expect((await call(three, `/backend/channels/${channel.id}/inbound`, { from: nextMobile(), content: 'só no três' })).status).toBe(200);
    expect((await call(four, `/backend/channels/${channel.id}/inbound`, { from: nextMobile(), content: 'no quatro' })).status).toBe(200);
    await onFour.until('no quatro');
    expect(contents(onFour)).toEqual(['no quatro']);
  });
});
