// The sync line of `npm run bench`: a sync page (`updated_since`, then a `cursor` from the middle of the
// data) beside the normal first page, for the leads list and the deals list, through REST, with
// throughput, p50/p99 and SQL statements per request, and the plan PostgreSQL picks for each sync read
// (it must be an index range scan on (tenant_id, updated_at, id), or (…, pipeline_id, …) for deals).
//
// BENCH_SYNC_DEALS (100000 deals in one pipeline), BENCH_SYNC_LEADS (100000).
import pg from 'pg';
import { autocannon, pad, type LoadResult } from './autocannon.js';
import type { BenchLine } from './line.js';

const DEALS = Number(process.env.BENCH_SYNC_DEALS ?? 100_000);
const LEADS = Number(process.env.BENCH_SYNC_LEADS ?? 100_000);
const LIMIT = 100;

type Result = LoadResult & { statements: number };

export const syncLine: BenchLine = {
  name: 'sync',
  async run(env) {
    const { totalStatements } = await import('../src/db/statements.js');
    const { seed } = await import('./seed.js');
    const pool = new pg.Pool({ connectionString: env.dbUrl, max: 2, options: `-c search_path="${env.schema}"` });
    const t0 = Date.now();
    const seeded = await seed(pool, { leads: LEADS, listDeals: DEALS, boardDeals: 0, log: env.log });
    await pool.query('VACUUM ANALYZE leads');
    await pool.query('VACUUM ANALYZE deals');
    env.log(`sync: seeded in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    const auth = { authorization: `Bearer ${seeded.key}` };

    // A cursor from the middle of each list: the page a sync reads once it has caught up halfway.
    const middle = async (path: string, table: string, where: string, params: unknown[]) => {
      const { rows } = await pool.query(
        `SELECT updated_at FROM ${table} WHERE ${where} ORDER BY updated_at, id OFFSET (SELECT count(*) / 2 FROM ${table} WHERE ${where}) LIMIT 1`,
        params,
      );
      const since = (rows[0].updated_at as Date).toISOString();
      const r = await fetch(`${env.serverUrl}${path}${path.includes('?') ? '&' : '?'}updated_since=${since}&limit=${LIMIT}`, {
        headers: auth,
      });
      const body = (await r.json()) as { pagination?: { next_cursor: string | null } };
      if (r.status !== 200 || !body.pagination?.next_cursor)
        throw new Error(`sync: ${path} answered ${r.status} ${JSON.stringify(body).slice(0, 300)}`);
      return { since, cursor: body.pagination.next_cursor };
    };
    const leads = await middle('/backend/leads', 'leads', 'tenant_id = $1', [seeded.tenantId]);
    const deals = await middle(`/backend/pipelines/${seeded.listPipelineId}/deals`, 'deals', 'tenant_id = $1 AND pipeline_id = $2', [
      seeded.tenantId,
      seeded.listPipelineId,
    ]);

    const plan = async (table: string, where: string, params: unknown[], since: string) => {
      const { rows } = await pool.query(
        `EXPLAIN SELECT * FROM ${table} WHERE ${where} AND updated_at > $${params.length + 1} AND updated_at < now() ORDER BY updated_at, id LIMIT ${LIMIT + 1}`,
        [...params, since],
      );
      return (
        rows
          .map((r: Record<string, string>) => r['QUERY PLAN'])
          .find((l: string) => /Scan/.test(l))
          ?.trim() ?? '?'
      );
    };
    const plans = [
      `leads sync read: ${await plan('leads', 'tenant_id = $1', [seeded.tenantId], leads.since)}`,
      `deals sync read: ${await plan('deals', 'tenant_id = $1 AND pipeline_id = $2', [seeded.tenantId, seeded.listPipelineId], deals.since)}`,
    ];
    await pool.end();

    const dealsPath = `/backend/pipelines/${seeded.listPipelineId}/deals`;
    const scenarios = [
      { name: 'leads, first page', path: `/backend/leads?limit=${LIMIT}` },
      { name: 'leads, sync (since)', path: `/backend/leads?limit=${LIMIT}&updated_since=${leads.since}` },
      { name: 'leads, sync (cursor)', path: `/backend/leads?limit=${LIMIT}&cursor=${encodeURIComponent(leads.cursor)}` },
      { name: 'deals, first page', path: `${dealsPath}?limit=${LIMIT}` },
      { name: 'deals, sync (since)', path: `${dealsPath}?limit=${LIMIT}&updated_since=${deals.since}` },
      { name: 'deals, sync (cursor)', path: `${dealsPath}?limit=${LIMIT}&cursor=${encodeURIComponent(deals.cursor)}` },
    ];
    const rows: { name: string; r: Result }[] = [];
    // The counter is the process's: requests of the previous run still being answered (autocannon closes
    // its sockets with requests in flight) counted into this one's 40 to 100 statements. Wait until none runs.
    const quiet = async () => {
      for (let last = -1; last !== totalStatements.count;) {
        last = totalStatements.count;
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
    };
    for (const s of scenarios) {
      // Once first: a first request pays one-time reads (88 statements for the first leads page).
      await (await fetch(env.serverUrl + s.path, { headers: auth })).text();
      await quiet();
      const before = totalStatements.count;
      const res = await fetch(env.serverUrl + s.path, { headers: auth });
      await res.text();
      if (res.status !== 200) throw new Error(`sync: ${s.name} answered ${res.status}`);
      const statements = totalStatements.count - before;
      await autocannon(env.serverUrl + s.path, { headers: auth, connections: env.connections, duration: 2 });
      let best: Result | undefined;
      for (let round = 0; round < env.rounds; round++) {
        const r = await autocannon(env.serverUrl + s.path, { headers: auth, connections: env.connections, duration: env.duration });
        if (!best || r.rps > best.rps) best = { ...r, statements };
      }
      rows.push({ name: s.name, r: best! });
      env.log(`sync: ${s.name} done`);
    }

    const rps = (name: string) => rows.find((r) => r.name === name)!.r.rps;
    return {
      report: [
        `Sync pages — REST, limit ${LIMIT}, ${env.connections} connections, ${env.duration} s per run, best of ${env.rounds}`,
        `data: ${LEADS.toLocaleString('en')} leads, ${DEALS.toLocaleString('en')} deals in one pipeline`,
        '',
        `| ${pad('scenario', 22)} | ${pad('req/s', 8)} | ${pad('p50 ms', 7)} | ${pad('p99 ms', 7)} | ${pad('SQL/req', 7)} | errors |`,
        `| ${'-'.repeat(22)} | ${'-'.repeat(8)} | ${'-'.repeat(7)} | ${'-'.repeat(7)} | ${'-'.repeat(7)} | ------ |`,
        ...rows.map(
          ({ name, r }) =>
            `| ${pad(name, 22)} | ${pad(r.rps.toFixed(1), 8)} | ${pad(r.p50, 7)} | ${pad(r.p99, 7)} | ${pad(r.statements, 7)} | ${r.errors} |`,
        ),
        '',
        ...plans,
      ],
      summary: [
        `sync: cursor page / first page — leads ${(rps('leads, sync (cursor)') / rps('leads, first page')).toFixed(2)}×, deals ${(rps('deals, sync (cursor)') / rps('deals, first page')).toFixed(2)}×`,
      ],
    };
  },
};
