// Live data at scale: BENCH_SUBSCRIBERS (10,000) dealChanged subscribers on this one server process,
// half over WebSocket (graphql-ws, a socket each) and half over SSE (a stream each), held by a client
// process of their own (bench/subscribers-client.ts), spread over 100 pipelines of 10 organisations and
// 100 API keys (a key holds at most LIVE_SUBSCRIPTIONS_PER_KEY, 100). A warm-up edits every pipeline's
// deal through REST until every subscriber has heard it, keeping each pipeline's announcement; then for
// BENCH_DURATION seconds 100 changes a second, round-robin, each one of those announcements sent
// through the hub again as a commit sends it (the REST writes themselves would be measured instead:
// about 20 ms of this server's CPU each), reach their pipeline's 100 subscribers (10,000 deliveries a
// second). Reported: announcement → client latency per transport and together, and the server's
// memory per 1,000 subscribers (its RSS with every subscriber registered, after a full collection,
// minus before any, per subscriber). Last in the bench's output:
// `subscribers: n=<count> p99_ms=<ms> mb_per_1000=<MB>`.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { liveHub } from '../src/events/live.js';
import { percentile } from './autocannon.js';
import { profiled } from './cpu-profile.js';
import type { BenchLine } from './line.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 10_000);
const PIPELINES = 100;
const KEYS = 100;
const ORGANISATIONS = 10;
const EVENTS_PER_SECOND = 100;
const clientProcess = fileURLToPath(new URL('./subscribers-client.ts', import.meta.url));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mb = (bytes: number) => bytes / 2 ** 20;

async function settledRss() {
  for (let i = 0; i < 3; i++) {
    gc();
    await sleep(200);
  }
  return process.memoryUsage().rss;
}

export const subscribersLine: BenchLine = {
  name: 'subscribers',
  async run(env) {
    const call = async (key: string, method: string, path: string, body?: unknown) => {
      const r = await fetch(`${env.serverUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = (await r.json()) as any;
      if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
      return json;
    };
    // ORGANISATIONS × (PIPELINES / ORGANISATIONS pipelines, KEYS / ORGANISATIONS keys): one organisation's
    // deal edits queue behind each other (about 55 a second here), so the edits come from several.
    const keys: string[] = [];
    const pipelines: { id: string; deal: string; key: string; topic: string }[] = [];
    for (let o = 0; o < ORGANISATIONS; o++) {
      const org = await env.organisation(`Bench subscribers ${o}`);
      const me = await call(org.key, 'GET', '/backend/me');
      const own = [org.key];
      while (own.length < KEYS / ORGANISATIONS)
        own.push((await call(org.key, 'POST', '/backend/api-keys', { name: `live ${own.length}`, user_id: me.data.id })).data.key);
      keys.push(...own);
      const lead = await call(org.key, 'POST', '/backend/leads', { name: 'Ana', phone: '+5511988887777' });
      let groupId: string | undefined;
      for (let i = 0; i < PIPELINES / ORGANISATIONS; i++) {
        const p = await call(
          org.key,
          'POST',
          '/backend/pipelines',
          i === 0 ? { name: `Live ${i}`, new_group_name: 'Live' } : { name: `Live ${i}`, group_id: groupId },
        );
        groupId ??= p.group_id;
        const deal = await call(org.key, 'POST', '/backend/pipeline/deals', {
          pipeline_id: p.id,
          stage_id: p.stages[0].id,
          lead_id: lead.data.id,
        });
        pipelines.push({ id: p.id, deal: deal.id, key: org.key, topic: `${org.tenantId}:${p.id}` });
      }
    }
    // Subscriber i: pipeline i mod 100 (so every pipeline has as many), with a key of that pipeline's organisation.
    const subscriptions = Array.from({ length: SUBSCRIBERS }, (_, i) => {
      const p = i % PIPELINES;
      const org = Math.floor(p / (PIPELINES / ORGANISATIONS));
      const perOrg = KEYS / ORGANISATIONS;
      return {
        key: keys[org * perOrg + (Math.floor(i / PIPELINES) % perOrg)],
        pipelineId: pipelines[p].id,
        transport: Math.floor(i / PIPELINES) % 2 === 0 ? ('ws' as const) : ('sse' as const),
      };
    });
    const before = await settledRss();
    // The plan goes in a file: 10,000 keys and ids are too long for a command line.
    const planFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'funil-bench-subscribers-')), 'plan.json');
    fs.writeFileSync(planFile, JSON.stringify({ url: env.serverUrl, subscriptions }));
    const child = spawn(process.execPath, ['--import', 'tsx', clientProcess, planFile], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const messages: any[] = [];
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = JSON.parse(line);
      if (m.failed) env.log(`subscribers: the client failed: ${m.failed}`);
      messages.push(m);
    });
    const next = async (match: (m: any) => boolean, what: string, timeoutMs = 300_000) => {
      const started = Date.now();
      for (;;) {
        const found = messages.find(match);
        if (found) return found;
        if (messages.some((m) => m.failed) || Date.now() - started > timeoutMs) throw new Error(`subscribers: no ${what}`);
        await sleep(50);
      }
    };
    const t0 = Date.now();
    await next((m) => m.connected, 'connection');
    env.log(`subscribers: ${SUBSCRIBERS} connected in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    // Every subscriber registered: edits until each has received one.
    const writes: number[] = [];
    const edit = async (p: { deal: string; key: string }) => {
      const t = Date.now();
      await call(p.key, 'PUT', `/backend/pipeline/deals/${p.deal}`, { note: `t=${t}` });
      writes.push(Date.now() - t);
    };
    // Each pipeline's announcement as a commit sends it, kept to be sent again in the measured phase.
    const hub = liveHub(env.config);
    const announced = new Map<string, { events: { deal: { deal: { note: string } } | null }[] }>();
    const listening = pipelines.map((p) => {
      const stream = hub.subscribe('dealChanged', p.topic);
      void (async () => {
        for await (const batch of stream) if (!announced.has(p.topic)) announced.set(p.topic, batch as never);
      })();
      return stream;
    });
    for (let round = 0; ; round++) {
      await Promise.all(pipelines.map((p) => edit(p)));
      await sleep(1_000);
      const last = [...messages].reverse().find((m) => m.reached !== undefined);
      if (last?.reached >= SUBSCRIBERS) break;
      if (round > 60) throw new Error(`subscribers: only ${last?.reached} of ${SUBSCRIBERS} registered`);
    }
    const after = await settledRss();
    const counts = env.app.live.counts();

    for (const stream of listening) await stream.return();
    // The measured phase: 100 changes a second, round-robin over the pipelines, each the announcement
    // its commit sent (the REST write itself costs about 20 ms of this server's CPU: 100 a second would
    // measure the writes, whose latency the warm-up reports).
    // The warm-up's latencies are dropped (`reset`), once its last events have arrived.
    await sleep(2_000);
    const warmupWrites = [...writes].sort((a, b) => a - b);
    messages.length = 0;
    child.stdin.write('reset\n');
    await sleep(200);
    const stopAt = Date.now() + env.duration * 1_000;
    let sent = 0;
    const started = Date.now();
    await profiled('subscribers', async () => {
      while (Date.now() < stopAt) {
        const due = Math.floor(((Date.now() - started) / 1_000) * EVENTS_PER_SECOND);
        while (sent < due) {
          const p = pipelines[sent++ % PIPELINES];
          const batch = announced.get(p.topic)!;
          hub.publish('dealChanged', p.topic, {
            // The announced deal is its row (`deal.deal`) with its card's extras.
            events: batch.events.map((e) => ({ ...e, deal: e.deal && { ...e.deal, deal: { ...e.deal.deal, note: `t=${Date.now()}` } } })),
          });
        }
        await sleep(5);
      }
      await sleep(2_000);
    });
    await sleep(2_000);
    child.stdin.write('stop\n');
    const result = await next((m) => m.latencies, 'latencies');
    await new Promise((resolve) => child.once('close', resolve));
    fs.rmSync(path.dirname(planFile), { recursive: true, force: true });

    const measured = (xs: number[]) => [...xs].sort((a, b) => a - b);
    const ws = measured(result.latencies.ws);
    const sse = measured(result.latencies.sse);
    const all = [...ws, ...sse].sort((a, b) => a - b);
    const perThousand = (mb(after - before) / SUBSCRIBERS) * 1_000;
    const expected = (sent * SUBSCRIBERS) / PIPELINES;
    const report = [
      `live subscribers — ${SUBSCRIBERS} dealChanged subscribers on one process (${counts.sockets} WebSockets, ${counts.streams - counts.sockets} SSE streams), ` +
        `${PIPELINES} pipelines, ${sent} changes in ${env.duration} s (${EVENTS_PER_SECOND}/s), ${all.length} of ${expected} deliveries received, ${result.errors} errors`,
      `  event → client  p50 ${percentile(all, 50)} ms  p99 ${percentile(all, 99)} ms  (WebSocket p99 ${percentile(ws, 99)} ms, SSE p99 ${percentile(sse, 99)} ms), from the announcement`,
      `  the warm-up's REST edits (${PIPELINES} at once): p50 ${percentile(warmupWrites, 50)} ms, p99 ${percentile(warmupWrites, 99)} ms`,
      `  server memory   ${mb(before).toFixed(0)} MB → ${mb(after).toFixed(0)} MB with every subscriber registered: ${perThousand.toFixed(1)} MB per 1,000`,
    ];
    return {
      report,
      last: [`subscribers: n=${SUBSCRIBERS} p99_ms=${percentile(all, 99)} mb_per_1000=${perThousand.toFixed(1)}`],
    };
  },
};
