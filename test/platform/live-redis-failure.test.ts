// Live data through Redis is never silent: with the Redis server killed under live subscriptions (one
// over WebSocket, one over SSE), each ends with SERVICE_UNAVAILABLE, which its client sees; while Redis
// is away a new subscription is refused at once; once it is back, subscriptions hear changes again. A
// process whose Redis subscriber never connected is not ready. Redis here is its own `redis-server`.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/http/server.js';
import { useTestApp, type TestClient } from '../helpers/app.js';
import { dealRequests, makeOrgWithPipeline, type OrgWithPipeline } from '../helpers/factories.js';
import { listenOnSocket, subscribeSse, type SseStream } from '../helpers/sse.js';
import { subscribeWs } from '../helpers/ws.js';
import { DEAL_CHANGED, type DealChangeEvent } from '../deals/live-queries.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

let port = 0;
let deadPort = 0;
let redis: ChildProcess | undefined;

async function startRedis() {
  redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (up) return;
    await sleep(50);
  }
  throw new Error('redis-server did not start');
}

function killRedis() {
  redis?.kill('SIGKILL');
  redis = undefined;
}

beforeAll(async () => {
  port = await freePort();
  deadPort = await freePort();
  await startRedis();
});

const api = useTestApp(() => ({ REDIS_URL: `redis://127.0.0.1:${port}` }));
const withoutRedis = useTestApp(() => ({ REDIS_URL: `redis://127.0.0.1:${deadPort}` }));

let server: RunningServer;
const streams: SseStream<unknown>[] = [];
beforeAll(async () => {
  server = await listenOnSocket(api);
});
afterAll(async () => {
  await Promise.all(streams.map((s) => s.close()));
  await server?.close();
  api.app?.close();
  withoutRedis.app?.close();
  killRedis();
});

async function until(what: string, done: () => boolean, timeoutMs = 15_000) {
  const started = Date.now();
  while (!done()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** A registered dealChanged subscriber over `transport`: a probe deal's edits have reached it. */
async function subscriber(client: TestClient, setup: OrgWithPipeline, transport: 'ws' | 'sse') {
  const { newDeal, put } = dealRequests(client, setup);
  const probe = await newDeal({ note: 'probe' });
  const variables = { pipeline_id: setup.p.id };
  const stream =
    transport === 'ws'
      ? subscribeWs<DealChangeEvent>(server.url, setup.org.key, DEAL_CHANGED, variables)
      : await subscribeSse<DealChangeEvent>(server.url, setup.org.key, DEAL_CHANGED, variables);
  streams.push(stream);
  let n = 0;
  await stream.ready(
    () => put(probe.id, { note: `probe ${++n}` }),
    (e) => e.deal_id === probe.id,
  );
  return stream;
}

describe('live data when Redis fails', () => {
  it('is not ready before its Redis subscriber connects', async () => {
    expect((await withoutRedis.raw('/ready')).status).toBe(503);
    expect((await api.raw('/ready')).status).toBe(200);
  });

  it('ends live subscriptions with an error when Redis goes, refuses new ones meanwhile, and recovers', async () => {
    const setup = await makeOrgWithPipeline(api);
    const overWs = await subscriber(api, setup, 'ws');
    const overSse = await subscriber(api, setup, 'sse');

    killRedis();
    for (const [name, stream] of [
      ['WebSocket', overWs],
      ['SSE', overSse],
    ] as const) {
      await until(`the ${name} subscription to end`, () => stream.completed);
      expect(stream.errors, name).toEqual([
        expect.objectContaining({ extensions: expect.objectContaining({ code: 'SERVICE_UNAVAILABLE' }) }),
      ]);
    }
    // The process stays ready: REST and queries do not need Redis.
    expect((await api.raw('/ready')).status).toBe(200);

    const meanwhile = await subscribeSse(server.url, setup.org.key, DEAL_CHANGED, { pipeline_id: setup.p.id });
    streams.push(meanwhile);
    await until('the refusal', () => meanwhile.completed);
    expect(meanwhile.errors[0]).toMatchObject({ extensions: { code: 'SERVICE_UNAVAILABLE' } });

    await startRedis();
    // ioredis reconnects by itself: soon a new subscription is taken, and hears changes again.
    let again: SseStream<DealChangeEvent> | undefined;
    for (let attempt = 0; attempt < 100 && !again; attempt++) {
      const trial = subscribeWs<DealChangeEvent>(server.url, setup.org.key, DEAL_CHANGED, { pipeline_id: setup.p.id });
      streams.push(trial);
      await sleep(200);
      if (!trial.completed) again = trial;
    }
    expect(again).toBeDefined();
    const { newDeal } = dealRequests(api, setup);
    const deal = await newDeal({});
    await again!.until((e) => e.deal_id === deal.id, 'a change after Redis came back');
  });
});
