// The metrics line of `npm run bench`: what recording the Prometheus metrics costs a request. The same
// REST route (GET /backend/tags) is loaded with metrics off and on, in interleaved runs (best of each);
// the cost per request is the difference of the server's time per request (1/throughput, the server
// being one event loop). Beside it, the recording calls alone, timed in a loop.
//
// Alone: `BENCH_ONLY=metrics npm run bench`.
import { autocannon, pad, type LoadResult } from './autocannon.js';
import type { BenchLine } from './line.js';

export const metricsLine: BenchLine = {
  name: 'metrics',
  async run(env) {
    const { enableMetrics, observeRequest, countGraphQLOperation } = await import('../src/observability/metrics.js');
    const { key } = await env.organisation('Metrics bench');
    const url = `${env.serverUrl}/backend/tags`;
    const opts = { headers: { authorization: `Bearer ${key}` }, connections: env.connections };
    await autocannon(url, { ...opts, duration: 2 });
    const best: Record<'off' | 'on', LoadResult | undefined> = { off: undefined, on: undefined };
    for (let round = 0; round < env.rounds; round++) {
      for (const state of ['off', 'on'] as const) {
        enableMetrics(state === 'on');
        const r = await autocannon(url, { ...opts, duration: env.duration });
        if (!best[state] || r.rps > best[state]!.rps) best[state] = r;
      }
    }
    enableMetrics(true);
    // The recording alone: one request's histogram sample, and a GraphQL request's operation count too.
    const calls = 200_000;
    let t0 = performance.now();
    for (let i = 0; i < calls; i++) observeRequest('/backend/tags', 'GET', 200, 0.003);
    const observeUs = ((performance.now() - t0) * 1000) / calls;
    t0 = performance.now();
    for (let i = 0; i < calls; i++) countGraphQLOperation('query', 'Tags');
    const countUs = ((performance.now() - t0) * 1000) / calls;
    enableMetrics(false);

    const off = best.off!;
    const on = best.on!;
    const costUs = 1e6 / on.rps - 1e6 / off.rps;
    env.log(`metrics: off ${off.rps.toFixed(0)} req/s, on ${on.rps.toFixed(0)} req/s`);
    const report = [
      `Metrics — GET /backend/tags, ${env.connections} connections, ${env.duration} s per run, best of ${env.rounds} interleaved runs`,
      '',
      `| ${pad('metrics', 8)} | ${pad('req/s', 8)} | ${pad('p50 ms', 7)} | ${pad('p99 ms', 7)} | errors |`,
      `| ${'-'.repeat(8)} | ${'-'.repeat(8)} | ${'-'.repeat(7)} | ${'-'.repeat(7)} | ------ |`,
      ...(['off', 'on'] as const).map(
        (s) =>
          `| ${pad(s, 8)} | ${pad(best[s]!.rps.toFixed(1), 8)} | ${pad(best[s]!.p50, 7)} | ${pad(best[s]!.p99, 7)} | ${best[s]!.errors} |`,
      ),
      '',
      `Cost per request: ${costUs.toFixed(1)} µs (1/on − 1/off; target ≤ 30 µs). The recording alone: ${observeUs.toFixed(2)} µs per request sample, ${countUs.toFixed(2)} µs per GraphQL operation count.`,
    ];
    return {
      report,
      summary: [`metrics: ${costUs.toFixed(1)} µs per request (HTTP, on vs off), ${observeUs.toFixed(2)} µs recording alone`],
    };
  },
};
