// The deals line of `npm run bench`: the deals list (limit 20 and 100) and the board, each as (a) REST,
// (b) the same GraphQL query and (c) a hand-written raw-SQL server (bench/raw-server.ts), and the list
// also as (d) PostGraphile V5 on the same tables (bench/postgraphile.ts), with throughput, p50/p99 and
// SQL statements per request. The JSON of all of them is checked to agree first (PostGraphile's answer
// mapped to the REST shape). Its summary, among the last lines of `npm run bench`, gives the list's ratios.
//
// BENCH_LIST_DEALS (100000), BENCH_BOARD_DEALS (1000000), BENCH_LEADS (50000).
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import { autocannon, pad, type LoadResult } from './autocannon.js';
import type { BenchLine } from './line.js';

const LIST_DEALS = Number(process.env.BENCH_LIST_DEALS ?? 100_000);
const BOARD_DEALS = Number(process.env.BENCH_BOARD_DEALS ?? 1_000_000);
const LEADS = Number(process.env.BENCH_LEADS ?? 50_000);

type Result = LoadResult & { statements: number };

/** A GraphQL selection set with every key of the REST JSON (arrays: the union of their items' keys). */
function selectionOf(value: unknown): string {
  const items = Array.isArray(value) ? value : [value];
  const fields = new Map<string, unknown[]>();
  for (const item of items) {
    if (!item || typeof item !== 'object') continue;
    for (const [k, v] of Object.entries(item)) fields.set(k, [...(fields.get(k) ?? []), ...(Array.isArray(v) ? v : [v])]);
  }
  return [...fields]
    .map(([k, vs]) => {
      const objects = vs.filter((v) => v && typeof v === 'object');
      return objects.length ? `${k} { ${selectionOf(objects)} }` : k;
    })
    .join(' ');
}

export const dealsLine: BenchLine = {
  name: 'deals',
  async run(env) {
    const { totalStatements } = await import('../src/db/statements.js');
    const { seed } = await import('./seed.js');
    const { startRawServer } = await import('./raw-server.js');
    const POOL = 10;

    const seedPool = new pg.Pool({ connectionString: env.dbUrl, max: 2, options: `-c search_path="${env.schema}"` });
    const t0 = Date.now();
    const seeded = await seed(seedPool, { leads: LEADS, listDeals: LIST_DEALS, boardDeals: BOARD_DEALS, log: env.log });
    await seedPool.end();
    env.log(`deals: seeded in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    const raw = await startRawServer(env.dbUrl, env.schema, POOL);
    const { startPostGraphile } = await import('./postgraphile.js');
    const postgraphile = await startPostGraphile(env.dbUrl, env.schema, POOL);
    const auth = { authorization: `Bearer ${seeded.key}` };
    const { serverUrl, duration } = env;

    const scenarios = [
      {
        name: 'deals list, limit 20',
        duration,
        limit: 20,
        rest: `/backend/pipelines/${seeded.listPipelineId}/deals?limit=20`,
        raw: `/pipelines/${seeded.listPipelineId}/deals?limit=20`,
        field: 'pipelineDeals',
        args: `id: "${seeded.listPipelineId}", limit: 20`,
      },
      {
        name: 'deals list, limit 100',
        duration,
        limit: 100,
        rest: `/backend/pipelines/${seeded.listPipelineId}/deals?limit=100`,
        raw: `/pipelines/${seeded.listPipelineId}/deals?limit=100`,
        field: 'pipelineDeals',
        args: `id: "${seeded.listPipelineId}", limit: 100`,
      },
      {
        name: `board (${(BOARD_DEALS / 1e6).toFixed(1)}M deals)`,
        duration: 2 * duration,
        rest: `/backend/pipelines/${seeded.boardPipelineId}/board`,
        raw: `/pipelines/${seeded.boardPipelineId}/board`,
        field: 'pipelineBoard',
        args: `id: "${seeded.boardPipelineId}"`,
      },
    ];

    const rows: { scenario: string; variant: string; r: Result }[] = [];
    try {
      for (const s of scenarios) {
        // One request of each kind, sequential: the JSON must agree, and we count SQL statements.
        const restBefore = totalStatements.count;
        const restRes = await fetch(serverUrl + s.rest, { headers: auth });
        const restText = await restRes.text();
        const restJson = JSON.parse(restText);
        const restStatements = totalStatements.count - restBefore;
        if (restRes.status !== 200) throw new Error(`${s.name}: REST ${restRes.status} ${JSON.stringify(restJson)}`);
        const query = `query Bench { ${s.field}(${s.args}) { ${selectionOf(restJson)} } }`;
        const gqlBody = JSON.stringify({ query });
        const gqlBefore = totalStatements.count;
        const gqlRes = await fetch(serverUrl + '/graphql', {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: gqlBody,
        });
        const gqlJson = (await gqlRes.json()) as { data?: Record<string, unknown>; errors?: unknown };
        const gqlStatements = totalStatements.count - gqlBefore;
        if (gqlJson.errors) throw new Error(`${s.name}: GraphQL ${JSON.stringify(gqlJson.errors)}`);
        const rawBefore = raw.statements.count;
        const rawJson = await (await fetch(raw.url + s.raw, { headers: auth })).json();
        const rawStatements = raw.statements.count - rawBefore;
        const sameGql = isDeepStrictEqual(gqlJson.data?.[s.field], restJson);
        const sameRaw = isDeepStrictEqual(rawJson, restJson);
        const gqlOpts = { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: gqlBody };
        const variants: {
          variant: string;
          url: string;
          opts: { method?: string; headers: Record<string, string>; body?: string };
          statements: number;
        }[] = [
          { variant: '(a) REST', url: serverUrl + s.rest, opts: { headers: auth }, statements: restStatements },
          { variant: '(b) GraphQL', url: serverUrl + '/graphql', opts: gqlOpts, statements: gqlStatements },
          { variant: '(c) raw SQL', url: raw.url + s.raw, opts: { headers: auth }, statements: rawStatements },
        ];
        let samePgl = '';
        if (s.limit) {
          // (d) PostGraphile, on the list only: its answer, mapped to the REST shape, must agree too.
          const pglOpts = {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: postgraphile.listBody(seeded.tenantId, seeded.listPipelineId, s.limit),
          };
          const pglBefore = postgraphile.statements.count;
          const pglJson = await (await fetch(postgraphile.url + '/graphql', pglOpts)).json();
          const pglStatements = postgraphile.statements.count - pglBefore;
          samePgl = `, PostGraphile ${isDeepStrictEqual(postgraphile.toRestShape(pglJson, s.limit), restJson) ? 'yes' : 'NO'}`;
          variants.push({ variant: '(d) PostGraphile', url: postgraphile.url + '/graphql', opts: pglOpts, statements: pglStatements });
        }
        env.log(
          `${s.name}: same JSON — GraphQL ${sameGql ? 'yes' : 'NO'}, raw ${sameRaw ? 'yes' : 'NO'}${samePgl}; REST bytes as JSON.stringify writes them: ${restText === JSON.stringify(restJson) ? 'yes' : 'NO'}`,
        );

        // Warm-up, then `rounds` interleaved runs of every variant; the best of each is kept.
        for (const v of variants) await autocannon(v.url, { ...v.opts, connections: env.connections, duration: 2 });
        const best = new Map<string, Result>();
        for (let round = 0; round < env.rounds; round++) {
          for (const v of variants) {
            const r = await autocannon(v.url, { ...v.opts, connections: env.connections, duration: s.duration });
            const prev = best.get(v.variant);
            if (!prev || r.rps > prev.rps) best.set(v.variant, { ...r, statements: v.statements });
          }
        }
        for (const v of variants) rows.push({ scenario: s.name, variant: v.variant, r: best.get(v.variant)! });
        env.log(`${s.name}: done`);
      }
    } finally {
      await raw.close();
      await postgraphile.close();
    }

    const report = [
      `Deals — ${env.connections} connections, ${duration} s per list run, ${2 * duration} s per board run, best of ${env.rounds} interleaved runs`,
      `data: ${LIST_DEALS.toLocaleString('en')} deals (list pipeline), ${BOARD_DEALS.toLocaleString('en')} deals (board pipeline), ${LEADS.toLocaleString('en')} leads, 200 products`,
      '',
      `| ${pad('scenario', 22)} | ${pad('variant', 16)} | ${pad('req/s', 8)} | ${pad('p50 ms', 7)} | ${pad('p99 ms', 7)} | ${pad('SQL/req', 7)} | errors |`,
      `| ${'-'.repeat(22)} | ${'-'.repeat(16)} | ${'-'.repeat(8)} | ${'-'.repeat(7)} | ${'-'.repeat(7)} | ${'-'.repeat(7)} | ------ |`,
      ...rows.map(
        ({ scenario, variant, r }) =>
          `| ${pad(scenario, 22)} | ${pad(variant, 16)} | ${pad(r.rps.toFixed(1), 8)} | ${pad(r.p50, 7)} | ${pad(r.p99, 7)} | ${pad(r.statements, 7)} | ${r.errors} |`,
      ),
      '',
      'Targets:',
    ];
    const ratio = (x: Result, y: Result) => (x.rps / y.rps).toFixed(2);
    const list: Record<string, Record<number, string>> = { 'REST/raw': {}, 'GraphQL/raw': {}, 'REST/PostGraphile': {} };
    for (const s of scenarios) {
      const [a, b, c, d] = rows.filter((r) => r.scenario === s.name).map((r) => r.r);
      const isBoard = s.field === 'pipelineBoard';
      const checks = [
        `(a)/(c) throughput ${ratio(a, c)}× (target ≥ ${isBoard ? '0.95' : '0.9'})`,
        ...(isBoard
          ? []
          : [`(b)/(c) ${ratio(b, c)}× (target ≥ 0.9)`, `(a)/(d) ${ratio(a, d)}× and (b)/(d) ${ratio(b, d)}× (target ≥ 1.3)`]),
        `(a) p50 / (b) p50 ${(a.p50 / Math.max(b.p50, 1)).toFixed(2)}× (target ≤ 1.05)`,
        isBoard
          ? `(a) p50 / (c) p50 ${(a.p50 / Math.max(c.p50, 1)).toFixed(2)}× (target ≤ 1.15)`
          : `statements (a) ${a.statements}, (b) ${b.statements} (target ≤ 3, same for 20 and 100)`,
      ];
      report.push(`- ${s.name}: ${checks.join('; ')}`);
      if (s.limit) {
        list['REST/raw'][s.limit] = ratio(a, c);
        list['GraphQL/raw'][s.limit] = ratio(b, c);
        list['REST/PostGraphile'][s.limit] = ratio(a, d);
      }
    }
    // One line, in this exact form, so that runs compare at a glance (issue 14).
    const summary = `list ratios: ${Object.entries(list)
      .map(([name, byLimit]) => `${name} 20=${byLimit[20]} 100=${byLimit[100]}`)
      .join('; ')}`;
    return { report, summary: [summary] };
  },
};
