// The webhooks line of `npm run bench`: events committed by concurrent transactions (emit, as a change
// does), fanned out and delivered to a receiver on loopback that answers 204, by the server's job runner
// (Funil) and by a hand-written loop doing the same claims, POSTs and attempt log (bench/webhooks-raw.ts),
// one after the other on the same pool. Delay: from each event's commit to its arrival.
//   burst   BENCH_WEBHOOK_EVENTS (2,000) events committed as fast as BENCH_WEBHOOK_PRODUCERS (10)
//           producers can: events/s from the first commit to the last arrival, delay p50/p99 (on a
//           loaded machine the producers, in the same process, bound this)
//   backlog as many events committed first, then the consumer started: events/s from its start to the
//           last arrival, the delivery path's own throughput (the ratio `webhooks/raw` compares these)
//   steady  events offered at 200 and 500 per second for BENCH_WEBHOOK_STEADY_SECONDS (5): delay p50/p99
// Burst and backlog: the best of BENCH_ROUNDS interleaved runs of each. Summary: `webhooks/raw <ratio>`.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { percentile } from './autocannon.js';
import { profiled } from './cpu-profile.js';
import type { BenchEnv, BenchLine } from './line.js';
import { startRawDelivery } from './webhooks-raw.js';

const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 2000);
const PRODUCERS = Number(process.env.BENCH_WEBHOOK_PRODUCERS ?? 10);
const STEADY_SECONDS = Number(process.env.BENCH_WEBHOOK_STEADY_SECONDS ?? 5);
const RATES = [200, 500];
const WAIT_MS = 120_000;

interface Run {
  events: number;
  eventsPerSecond: number;
  /** Events per second actually committed (steady runs: what was offered). */
  offered: number;
  p50: number;
  p99: number;
  missing: number;
}

type Consumer = 'funil' | 'raw';

/** The loopback receiver: the first arrival of each event (by its seq). */
async function startReceiver() {
  const arrived = new Map<number, number>();
  const waiters = new Set<() => void>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seq = JSON.parse(Buffer.concat(chunks).toString()).data.seq as number;
      if (!arrived.has(seq)) arrived.set(seq, performance.now());
      res.writeHead(204).end();
      for (const wake of waiters) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrived,
    /** Resolves true once every seq arrived, false after WAIT_MS. */
    async all(seqs: number[]): Promise<boolean> {
      const deadline = Date.now() + WAIT_MS;
      while (!seqs.every((s) => arrived.has(s))) {
        if (Date.now() > deadline) return false;
        await new Promise<void>((resolve) => {
          const wake = () => (waiters.delete(wake), resolve());
          waiters.add(wake);
          setTimeout(wake, 200);
        });
      }
      return true;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export const webhooksLine: BenchLine = {
  name: 'webhooks',
  async run(env: BenchEnv) {
    const { TenantClients } = await import('../src/db/tenant-scope.js');
    const { emit } = await import('../src/events/emit.js');
    const { startJobRunner } = await import('../src/workers.js');
    env.log(
      `webhooks: burst of ${EVENTS} events (${PRODUCERS} producers), steady ${RATES.join(' and ')}/s for ${STEADY_SECONDS} s; Funil and the raw loop`,
    );

    const receiver = await startReceiver();
    const { tenantId, key } = await env.organisation('Bench webhooks');
    const created = await fetch(`${env.serverUrl}/backend/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, events: ['lead.created'] }),
    });
    if (created.status !== 201) throw new Error(`webhooks bench: could not register the hook (${created.status} ${await created.text()})`);
    const scoped = new TenantClients(env.db.prisma).for(tenantId);

    let nextSeq = 0;
    /** Commits `count` events, all at once or at `rate` per second; answers each seq's commit time. */
    const produce = async (count: number, rate?: number) => {
      const seqs = Array.from({ length: count }, () => nextSeq++);
      const committed = new Map<number, number>();
      let i = 0;
      const t0 = performance.now();
      const producer = async () => {
        while (i < seqs.length) {
          const n = i++;
          if (rate) {
            const wait = t0 + (n * 1000) / rate - performance.now();
            if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          }
          const seq = seqs[n];
          await scoped.$transaction((tx) => emit(tx, 'lead.created', { seq, name: `Lead ${seq}` }));
          committed.set(seq, performance.now());
        }
      };
      await Promise.all(Array.from({ length: PRODUCERS }, producer));
      return { seqs, committed, seconds: (performance.now() - t0) / 1000 };
    };

    const start = (consumer: Consumer) =>
      consumer === 'funil' ? startJobRunner(env.db, env.config) : Promise.resolve(startRawDelivery(env.db));
    /** Backlog: the events are committed first, then the consumer starts (throughput from its start). */
    /** `profileAs`: a CPU profile (BENCH_CPU_PROFILE) of the delivery, from the consumer's start to the last arrival. */
    const measure = async (
      consumer: Consumer,
      count: number,
      options: { rate?: number; backlog?: boolean; profileAs?: string } = {},
    ): Promise<Run> => {
      // Statistics as a running server has them (autovacuum analyses within a minute): on tables never
      // analysed the planner chose plans that read every event of the organisation per job, for the raw
      // loop's joins too, and each run was slower than the one before.
      await env.db.sql.query('ANALYZE events, webhooks, jobs, webhook_deliveries');
      const early = options.backlog ? undefined : await start(consumer);
      let running = early;
      try {
        const { seqs, committed, seconds } = await produce(count, options.rate);
        const from = options.backlog ? performance.now() : Math.min(...committed.values());
        const deliver = async () => {
          running ??= await start(consumer);
          return receiver.all(seqs);
        };
        const complete = options.profileAs ? await profiled(options.profileAs, deliver) : await deliver();
        const arrivals = seqs.filter((s) => receiver.arrived.has(s));
        const last = Math.max(...arrivals.map((s) => receiver.arrived.get(s)!));
        const delays = arrivals.map((s) => receiver.arrived.get(s)! - committed.get(s)!).sort((a, b) => a - b);
        return {
          events: arrivals.length,
          eventsPerSecond: arrivals.length / ((last - from) / 1000),
          offered: count / seconds,
          p50: Math.round(percentile(delays, 50)),
          p99: Math.round(percentile(delays, 99)),
          missing: complete ? 0 : count - arrivals.length,
        };
      } finally {
        await running?.stop();
      }
    };

    const bursts: Record<Consumer, Run[]> = { funil: [], raw: [] };
    const backlogs: Record<Consumer, Run[]> = { funil: [], raw: [] };
    for (let round = 0; round < env.rounds; round++) {
      for (const consumer of ['raw', 'funil'] as const) {
        const run = await measure(consumer, EVENTS);
        bursts[consumer].push(run);
        env.log(
          `webhooks burst ${consumer}: ${run.eventsPerSecond.toFixed(0)} events/s (committed at ${run.offered.toFixed(0)}/s), delay p50 ${run.p50} ms, p99 ${run.p99} ms${run.missing ? `, ${run.missing} missing` : ''}`,
        );
        const backlog = await measure(consumer, EVENTS, { backlog: true, profileAs: `webhooks-backlog-${consumer}-${round}` });
        backlogs[consumer].push(backlog);
        env.log(
          `webhooks backlog ${consumer}: ${backlog.eventsPerSecond.toFixed(0)} events/s${backlog.missing ? `, ${backlog.missing} missing` : ''}`,
        );
      }
    }
    const best = (runs: Run[]) => runs.reduce((a, b) => (b.eventsPerSecond > a.eventsPerSecond ? b : a));
    const burst = { funil: best(bursts.funil), raw: best(bursts.raw) };
    const backlog = { funil: best(backlogs.funil), raw: best(backlogs.raw) };
    const steady: { consumer: Consumer; rate: number; run: Run }[] = [];
    for (const rate of RATES) {
      for (const consumer of ['raw', 'funil'] as const) {
        const run = await measure(consumer, rate * STEADY_SECONDS, { rate });
        steady.push({ consumer, rate, run });
        env.log(
          `webhooks ${rate}/s ${consumer}: offered ${run.offered.toFixed(0)}/s, delay p50 ${run.p50} ms, p99 ${run.p99} ms${run.missing ? `, ${run.missing} missing` : ''}`,
        );
      }
    }
    await receiver.close();

    const ratio = backlog.funil.eventsPerSecond / backlog.raw.eventsPerSecond;
    const missing = (run: Run) => (run.missing ? `, ${run.missing} NOT DELIVERED within ${WAIT_MS / 1000} s` : '');
    const burstLine = (name: string, run: Run, drained: Run) =>
      `| ${name} | ${run.eventsPerSecond.toFixed(0)} events/s (committed at ${run.offered.toFixed(0)}/s) | ${run.p50} / ${run.p99} ms${missing(run)} | ${drained.eventsPerSecond.toFixed(0)} events/s${missing(drained)} |`;
    const steadyLine = (consumer: Consumer) =>
      `| ${consumer === 'funil' ? 'Funil' : 'raw loop'} | ${steady
        .filter((s) => s.consumer === consumer)
        .map((s) => `${s.rate}/s (offered ${s.run.offered.toFixed(0)}): ${s.run.p50} / ${s.run.p99} ms${missing(s.run)}`)
        .join(' | ')} |`;
    const funil500 = steady.find((s) => s.consumer === 'funil' && s.rate === 500)!.run;
    return {
      ratios: { 'webhooks/raw': ratio },
      report: [
        `Webhooks (commit → 2xx on a loopback receiver, one hook; WORKER_CONCURRENCY ${env.config.workerConcurrency}; best of ${env.rounds} bursts of ${EVENTS} events, ${PRODUCERS} producers)`,
        '',
        '| | burst: commit → 2xx | burst: delay p50 / p99 | backlog of the same size, from the start of delivery |',
        '|---|---|---|---|',
        burstLine('Funil', burst.funil, backlog.funil),
        burstLine('raw loop', burst.raw, backlog.raw),
        '',
        `| steady rate, ${STEADY_SECONDS} s | ${RATES.map((r) => `${r}/s: delay p50 / p99`).join(' | ')} |`,
        `|---|${RATES.map(() => '---').join('|')}|`,
        steadyLine('funil'),
        steadyLine('raw'),
      ],
      summary: [
        `webhooks/raw ${ratio.toFixed(2)}× (backlog ${backlog.funil.eventsPerSecond.toFixed(0)} vs ${backlog.raw.eventsPerSecond.toFixed(0)} events/s; ` +
          `burst ${burst.funil.eventsPerSecond.toFixed(0)} vs ${burst.raw.eventsPerSecond.toFixed(0)} events/s; Funil delay p99 at 500/s offered ${funil500.offered.toFixed(0)}/s: ${funil500.p99} ms)`,
      ],
    };
  },
};
