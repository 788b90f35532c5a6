// The kanban line of `npm run bench`: the README's board query (every stage with its count and total and
// `deals(first: 20)` with each deal's lead; without the README's `period`, which PostGraphile has no
// filter for) over (b) Funil's GraphQL, (c) a hand-written raw-SQL handler (bench/raw-server.ts) and
// (d) PostGraphile V5 on the same tables (bench/postgraphile.ts). The answers must carry the same data
// first (PostGraphile's mapped to Funil's shape; its cursors are its own, so endCursor is not compared
// with it). Reports req/s, p50/p99 and statements per request; the summary's `kanban/PostGraphile`.
//
// BENCH_KANBAN_DEALS (100000) deals in one pipeline of 6 stages, BENCH_KANBAN_LEADS (20000).
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import { autocannon, pad, type LoadResult } from './autocannon.js';
import type { BenchLine } from './line.js';

const DEALS = Number(process.env.BENCH_KANBAN_DEALS ?? 100_000);
const LEADS = Number(process.env.BENCH_KANBAN_LEADS ?? 20_000);

/** The README's board query (README.md, "The API in brief"), without `period`. */
export const kanbanQuery = (pipelineId: string) =>
  `{ pipelineBoard(id: "${pipelineId}") { total_deals total_amount stages { deal_count total stage { name deals(first: 20) { totalCount nodes { number total lead { name company } } pageInfo { endCursor hasNextPage } } } } } }`;

/** The answer without its cursors, to compare with PostGraphile's (whose cursors are its own). */
function withoutCursors(json: unknown): unknown {
  return JSON.parse(JSON.stringify(json), (k, v) => (k === 'endCursor' ? undefined : v));
}

export const kanbanLine: BenchLine = {
  name: 'kanban',
  async run(env) {
    const { totalStatements } = await import('../src/db/statements.js');
    const { seed } = await import('./seed.js');
    const { startRawServer } = await import('./raw-server.js');
    const { startPostGraphile } = await import('./postgraphile.js');
    const POOL = 10;

    const seedPool = new pg.Pool({ connectionString: env.dbUrl, max: 2, options: `-c search_path="${env.schema}"` });
    const seeded = await seed(seedPool, { leads: LEADS, listDeals: DEALS, boardDeals: 0, log: env.log }).finally(() => seedPool.end());
    const pipelineId = seeded.listPipelineId;
    const raw = await startRawServer(env.dbUrl, env.schema, POOL);
    const postgraphile = await startPostGraphile(env.dbUrl, env.schema, POOL);
    const auth = { authorization: `Bearer ${seeded.key}` };
    const json = { 'content-type': 'application/json' };

    const variants = [
      {
        variant: '(b) GraphQL',
        url: `${env.serverUrl}/graphql`,
        opts: { method: 'POST', headers: { ...auth, ...json }, body: JSON.stringify({ query: kanbanQuery(pipelineId) }) },
        count: () => totalStatements.count,
      },
      {
        variant: '(c) raw SQL',
        url: `${raw.url}/pipelines/${pipelineId}/kanban`,
        opts: { headers: auth },
        count: () => raw.statements.count,
      },
      {
        variant: '(d) PostGraphile',
        url: `${postgraphile.url}/graphql`,
        opts: { method: 'POST', headers: json, body: postgraphile.boardBody(seeded.tenantId, pipelineId) },
        count: () => postgraphile.statements.count,
      },
    ];
    const rows: { variant: string; r: LoadResult; statements: number }[] = [];
    try {
      // One request of each, sequential: the data must agree, and we count SQL statements.
      const answers: unknown[] = [];
      const statements: number[] = [];
      for (const v of variants) {
        const before = v.count();
        const res = await fetch(v.url, v.opts);
        const body = (await res.json()) as { errors?: unknown };
        statements.push(v.count() - before);
        if (res.status !== 200 || body.errors)
          throw new Error(`kanban: ${v.variant} answered ${res.status} ${JSON.stringify(body).slice(0, 500)}`);
        answers.push(body);
      }
      const [funil, rawAnswer, pgl] = answers;
      const sameRaw = isDeepStrictEqual(rawAnswer, funil);
      const samePgl = isDeepStrictEqual(withoutCursors(postgraphile.boardToFunilShape(pgl)), withoutCursors(funil));
      env.log(`kanban: same data — raw ${sameRaw ? 'yes' : 'NO'}, PostGraphile ${samePgl ? 'yes' : 'NO'} (cursors aside)`);
      if (!sameRaw || !samePgl) throw new Error(`kanban: the answers differ; Funil's: ${JSON.stringify(funil).slice(0, 500)}`);

      // Warm-up, then `rounds` interleaved runs of every variant; the best of each is kept.
      for (const v of variants) await autocannon(v.url, { ...v.opts, connections: env.connections, duration: 2 });
      const best = new Map<string, LoadResult>();
      for (let round = 0; round < env.rounds; round++) {
        for (const v of variants) {
          const r = await autocannon(v.url, { ...v.opts, connections: env.connections, duration: env.duration });
          const prev = best.get(v.variant);
          if (!prev || r.rps > prev.rps) best.set(v.variant, r);
        }
      }
      variants.forEach((v, i) => rows.push({ variant: v.variant, r: best.get(v.variant)!, statements: statements[i] }));
    } finally {
      await raw.close();
      await postgraphile.close();
    }

    const [b, c, d] = rows.map((r) => r.r);
    const report = [
      `Kanban (README's board query, 6 stages × deals(first: 20) × lead) — ${DEALS.toLocaleString('en')} deals, ${env.connections} connections, ${env.duration} s per run, best of ${env.rounds} interleaved runs`,
      '',
      `| ${pad('variant', 16)} | ${pad('req/s', 8)} | ${pad('p50 ms', 7)} | ${pad('p99 ms', 7)} | ${pad('SQL/req', 7)} | errors |`,
      `| ${'-'.repeat(16)} | ${'-'.repeat(8)} | ${'-'.repeat(7)} | ${'-'.repeat(7)} | ${'-'.repeat(7)} | ------ |`,
      ...rows.map(
        ({ variant, r, statements }) =>
          `| ${pad(variant, 16)} | ${pad(r.rps.toFixed(1), 8)} | ${pad(r.p50, 7)} | ${pad(r.p99, 7)} | ${pad(statements, 7)} | ${r.errors} |`,
      ),
      '',
      `- (b)/(d) throughput ${(b.rps / d.rps).toFixed(2)}× (target ≥ 1.3); (b)/(c) ${(b.rps / c.rps).toFixed(2)}×. PostGraphile checks no API key (one statement fewer).`,
    ];
    return { report, ratios: { 'kanban/PostGraphile': b.rps / d.rps } };
  },
};
