// The webhooks line of `npm run bench`: events committed by PRODUCERS concurrent transactions (emit,
// as a change does), fanned out and delivered by the server's job runner to a receiver on loopback
// that answers 204. Reports events per second from the first commit to the last 2xx, and the delay
// from each event's commit to its delivery (p50, p99).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Database } from '../src/db/client.js';
import type { Config } from '../src/config.js';
import { percentile } from './autocannon.js';
import type { BenchLine } from './line.js';

const WEBHOOK_EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 2000);
const WEBHOOK_PRODUCERS = Number(process.env.BENCH_WEBHOOK_PRODUCERS ?? 10);

export interface WebhookBenchResult {
  events: number;
  eventsPerSecond: number;
  p50: number;
  p99: number;
  failed: number;
}


export async function benchWebhooks(options: {
  db: Database;
  config: Config;
  /** The server the hook is registered through, and an owner key of `tenantId`. */
  serverUrl: string;
  key: string;
  tenantId: string;
  events: number;
  producers: number;
  log: (s: string) => void;
}): Promise<WebhookBenchResult> {
  const { TenantClients } = await import('../src/db/tenant-scope.js');
  const { emit } = await import('../src/events/emit.js');
  const { startJobRunner } = await import('../src/jobs/registry.js');

  const delivered = new Map<number, number>();
  let done: () => void = () => {};
  const allDelivered = new Promise<void>((resolve) => (done = resolve));
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seq = JSON.parse(Buffer.concat(chunks).toString()).data.seq as number;
      if (!delivered.has(seq)) delivered.set(seq, performance.now());
      res.writeHead(204).end();
      if (delivered.size === options.events) done();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  const created = await fetch(`${options.serverUrl}/backend/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${options.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: hookUrl, events: ['lead.created'] }),
  });
  if (created.status !== 201) throw new Error(`webhooks bench: could not register the hook (${created.status} ${await created.text()})`);

  const runner = await startJobRunner(options.db, options.config);
  const scoped = new TenantClients(options.db.prisma).for(options.tenantId);
  const committed = new Map<number, number>();
  let next = 0;
  const producer = async () => {
    while (next < options.events) {
      const seq = next++;
      await scoped.$transaction((tx) => emit(tx, 'lead.created', { seq, name: `Lead ${seq}` }));
      committed.set(seq, performance.now());
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: options.producers }, producer));
  options.log(`webhooks: ${options.events} events committed in ${((performance.now() - started) / 1000).toFixed(1)} s; waiting for the deliveries`);
  const timeout = new Promise<'timeout'>((resolve) => setTimeout(resolve, 120_000, 'timeout').unref());
  const finished = await Promise.race([allDelivered.then(() => 'ok' as const), timeout]);
  const last = Math.max(...delivered.values());
  await runner.stop();
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));

  const firstCommit = Math.min(...committed.values());
  const delays = [...delivered].map(([seq, at]) => at - committed.get(seq)!).sort((a, b) => a - b);
  return {
    events: delivered.size,
    eventsPerSecond: delivered.size / ((last - firstCommit) / 1000),
    p50: Math.round(percentile(delays, 50)),
    p99: Math.round(percentile(delays, 99)),
    failed: finished === 'ok' ? 0 : options.events - delivered.size,
  };
}

export const webhooksLine: BenchLine = {
  name: 'webhooks',
  async run(env) {
    env.log(`webhooks: ${WEBHOOK_EVENTS} events, ${WEBHOOK_PRODUCERS} producers`);
    const { tenantId, key } = await env.organisation('Bench webhooks');
    const hooks = await benchWebhooks({ db: env.db, config: env.config, serverUrl: env.serverUrl, key, tenantId, events: WEBHOOK_EVENTS, producers: WEBHOOK_PRODUCERS, log: env.log });
    return {
      report: [
        `Webhooks (commit → 2xx on a loopback receiver, ${WEBHOOK_PRODUCERS} producers, WORKER_CONCURRENCY ${env.config.workerConcurrency}): ` +
          `${hooks.events} events, ${hooks.eventsPerSecond.toFixed(1)} events/s, delay p50 ${hooks.p50} ms, p99 ${hooks.p99} ms` +
          (hooks.failed ? `, ${hooks.failed} NOT DELIVERED within 120 s` : ''),
      ],
    };
  },
};
