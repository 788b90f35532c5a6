// The fairness line of `npm run bench` (decisions.md, "Bounded work"): how much one organisation (A)
// flooding a shared queue slows another (B), as B's p99 latency with A flooding ÷ without (target ≤ 1.5):
// - extraction: B uploads a small CSV knowledge file, one at a time (BENCH_FAIRNESS_SAMPLES times),
//   while A keeps 4 uploads of a 1.7 MB CSV going;
// - webhook deliveries: B's events, from commit to its receiver's 2xx, while A has 100 deliveries queued
//   to a receiver that answers after 2 s;
// and the rate limiter's cost per request (µs): the same authenticated route through two apps, one
// with the limiter (a budget that is never reached) and one without, called in-process, alternating
// request by request (medians).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { percentile } from './autocannon.js';
import type { BenchEnv, BenchLine } from './line.js';

const SAMPLES = Number(process.env.BENCH_FAIRNESS_SAMPLES ?? 20);
const LIMITER_PAIRS = 3_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const p99 = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    99,
  );

async function extractionRatio(env: BenchEnv) {
  const a = await env.organisation('Bench fairness A');
  const b = await env.organisation('Bench fairness B');
  const upload = async (key: string, name: string, csv: string) => {
    const form = new FormData();
    form.set('name', name);
    form.set('file', new File([csv], `${name}.csv`));
    const started = performance.now();
    const r = await fetch(`${env.serverUrl}/backend/knowledge`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    await r.arrayBuffer();
    if (r.status !== 201) throw new Error(`fairness bench: upload answered ${r.status}`);
    return performance.now() - started;
  };
  const small = 'nome,telefone\nAna,+5511987650001\n';
  const medium = 'nome,telefone,cidade,estado\n'.repeat(60_000);
  const measureB = async () => {
    const times: number[] = [];
    for (let i = 0; i < SAMPLES; i++) times.push(await upload(b.key, `b${i}`, small));
    return times;
  };
  // The first uploads pay for cold paths (the connection, code compiled on first use): neither side's.
  for (let i = 0; i < 2; i++) await upload(b.key, `warm${i}`, small);
  const alone = await measureB();
  let flooding = true;
  const floods = Array.from({ length: 4 }, async (_, n) => {
    for (let i = 0; flooding; i++) await upload(a.key, `a${n}-${i}`, medium);
  });
  await sleep(500);
  const beside = await measureB();
  flooding = false;
  await Promise.all(floods);
  return { alone: p99(alone), beside: p99(beside) };
}

async function receiver(delayMs: number, onHit: (body: { data: { seq?: number } }) => void) {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      onHit(JSON.parse(Buffer.concat(chunks).toString()));
      setTimeout(() => res.writeHead(204).end(), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` };
}

async function deliveryRatio(env: BenchEnv) {
  const { TenantClients } = await import('../src/db/tenant-scope.js');
  const { emit } = await import('../src/events/emit.js');
  const { startJobRunner } = await import('../src/workers.js');
  const a = await env.organisation('Bench fairness hooks A');
  const b = await env.organisation('Bench fairness hooks B');
  const hit = new Map<number, number>();
  const slow = await receiver(2_000, () => {});
  const fast = await receiver(0, (body) => hit.set(body.data.seq!, performance.now()));
  for (const [org, url] of [
    [a, slow.url],
    [b, fast.url],
  ] as const) {
    const r = await fetch(`${env.serverUrl}/backend/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url, events: ['lead.created'] }),
    });
    if (r.status !== 201) throw new Error(`fairness bench: webhook answered ${r.status}`);
  }
  const tenants = new TenantClients(env.db.prisma);
  const runner = await startJobRunner(env.db, env.config);
  let seq = 0;
  const measureB = async () => {
    const delays: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const n = seq++;
      await tenants.for(b.tenantId).$transaction((tx) => emit(tx, 'lead.created', { seq: n }));
      const committed = performance.now();
      while (!hit.has(n)) await sleep(2);
      delays.push(hit.get(n)! - committed);
      await sleep(50);
    }
    return delays;
  };
  try {
    const alone = await measureB();
    const scopedA = tenants.for(a.tenantId);
    for (let i = 0; i < 100; i++) await scopedA.$transaction((tx) => emit(tx, 'lead.created', { seq: -1 }));
    await sleep(500);
    const beside = await measureB();
    return { alone: p99(alone), beside: p99(beside) };
  } finally {
    await runner.stop({ timeoutMs: 3_000 });
    // A's backlog is of no further use.
    await env.db.sql.query(`DELETE FROM jobs WHERE queue IN ('webhooks.deliver', 'events.dispatch')`);
    for (const r of [slow, fast]) {
      r.server.closeAllConnections();
      await new Promise((resolve) => r.server.close(resolve));
    }
  }
}

async function limiterCost(env: BenchEnv) {
  const { createApp } = await import('../src/app.js');
  const { key } = await env.organisation('Bench fairness limiter');
  const limited = createApp({ ...env.config, rateLimitPerMinute: 1_000_000_000 }, env.db);
  const unlimited = createApp({ ...env.config, rateLimitPerMinute: 0 }, env.db);
  const once = async (app: typeof limited) => {
    const started = performance.now();
    const r = await app.fetch(new Request('http://bench.local/backend/pipeline/groups', { headers: { authorization: `Bearer ${key}` } }), {
      address: '127.0.0.1',
    });
    await r.arrayBuffer();
    return (performance.now() - started) * 1000;
  };
  // Alternating request by request, medians: the machine's load moves both sides alike.
  const with_: number[] = [];
  const without: number[] = [];
  for (let i = 0; i < 300; i++) await Promise.all([once(limited), once(unlimited)]);
  for (let i = 0; i < LIMITER_PAIRS; i++) {
    with_.push(await once(limited));
    without.push(await once(unlimited));
  }
  limited.close();
  const median = (values: number[]) =>
    percentile(
      [...values].sort((a, b) => a - b),
      50,
    );
  return { with: median(with_), without: median(without) };
}

export const fairnessLine: BenchLine = {
  name: 'fairness',
  async run(env) {
    env.log(`fairness: extraction, then webhook deliveries (${SAMPLES} samples each), then the limiter`);
    const extraction = await extractionRatio(env);
    env.log(`fairness: extraction p99 ${extraction.alone.toFixed(0)} ms alone, ${extraction.beside.toFixed(0)} ms beside A`);
    const deliveries = await deliveryRatio(env);
    env.log(`fairness: delivery p99 ${deliveries.alone.toFixed(0)} ms alone, ${deliveries.beside.toFixed(0)} ms beside A`);
    const limiter = await limiterCost(env);
    const ratio = (r: { alone: number; beside: number }) => (r.beside / r.alone).toFixed(2);
    const cost = limiter.with - limiter.without;
    return {
      report: [
        `Fairness (organisation B's p99 with A flooding ÷ without; target ≤ 1.5):`,
        `  extraction (B: a small CSV; A: 4 uploads of 1.7 MB at a time, EXTRACT_CONCURRENCY ${env.config.extractConcurrency}): ` +
          `${extraction.alone.toFixed(0)} ms → ${extraction.beside.toFixed(0)} ms, ratio ${ratio(extraction)}`,
        `  webhook deliveries (B: commit → 2xx; A: 100 queued to a receiver answering after 2 s): ` +
          `${deliveries.alone.toFixed(0)} ms → ${deliveries.beside.toFixed(0)} ms, ratio ${ratio(deliveries)}`,
        `Rate limiter (in-process GET /backend/pipeline/groups, median of ${LIMITER_PAIRS.toLocaleString('en')} alternating pairs): ${limiter.without.toFixed(0)} µs without, ` +
          `${limiter.with.toFixed(0)} µs with: ${cost.toFixed(1)} µs per request (target ≤ 50)`,
      ],
      summary: [
        `fairness: extraction ratio ${ratio(extraction)}, deliveries ratio ${ratio(deliveries)}, limiter ${cost.toFixed(1)} µs/request`,
      ],
    };
  },
};
