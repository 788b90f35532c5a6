// The pglite line of `npm run bench`: the embedded database under load. The same data (bench/seed.ts,
// BENCH_PGLITE_DEALS deals in one pipeline) is seeded into PostgreSQL (a new organisation on the bench's
// schema, served by the bench's server) and into PGlite in a temporary directory; the deals list
// (limit 20) is then driven at BENCH_CONNECTIONS on each: PostgreSQL, PGlite in its worker thread (the
// default), and PGlite on the main thread (PGLITE_WORKER=false, as before the worker), interleaved.
// Reports req/s and p50/p99 of each and their ratios to PostgreSQL's.
//
// BENCH_PGLITE_DEALS (10000), BENCH_PGLITE_LEADS (5000).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { autocannon, pad, type LoadResult } from './autocannon.js';
import type { BenchLine } from './line.js';
import { startCommitter } from './committer.js';

const DEALS = Number(process.env.BENCH_PGLITE_DEALS ?? 10_000);
const LEADS = Number(process.env.BENCH_PGLITE_LEADS ?? 5_000);

/**
 * CPU time (ms) of each thread of this process so far, from /proc (Linux; empty elsewhere). Unlike
 * latency it hardly moves with the machine's load: the busiest thread's CPU per request bounds the
 * throughput an idle machine would give.
 */
function threadCpu(): Map<string, number> {
  const ticks = new Map<string, number>();
  try {
    for (const tid of fs.readdirSync('/proc/self/task')) {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks.set(tid, ((Number(fields[11]) + Number(fields[12])) * 1000) / 100); // utime + stime, 100 ticks/s
    }
  } catch {
    // not Linux
  }
  return ticks;
}

interface CpuPerRequest {
  main: number;
  /** The busiest thread but the main one: PGlite's own in worker mode. */
  other: number;
  all: number;
}

function cpuPerRequest(before: Map<string, number>, after: Map<string, number>, requests: number): CpuPerRequest {
  const main = String(process.pid);
  const used = [...after].map(([tid, ms]) => [tid, ms - (before.get(tid) ?? 0)] as const);
  const per = (ms: number) => ms / Math.max(requests, 1);
  return {
    main: per(used.find(([tid]) => tid === main)?.[1] ?? 0),
    other: per(Math.max(0, ...used.filter(([tid]) => tid !== main).map(([, ms]) => ms))),
    all: per(used.reduce((sum, [, ms]) => sum + ms, 0)),
  };
}

export const pgliteLine: BenchLine = {
  name: 'pglite',
  async run(env) {
    const { seed } = await import('./seed.js');
    const { openDatabase } = await import('../src/db/client.js');
    const { loadConfig } = await import('../src/config.js');
    const { createApp } = await import('../src/app.js');
    const { listen } = await import('../src/http/server.js');
    const opts = { leads: LEADS, listDeals: DEALS, boardDeals: 0, log: env.log };

    const pool = new pg.Pool({ connectionString: env.dbUrl, max: 2, options: `-c search_path="${env.schema}"` });
    const onPostgres = await seed(pool, opts).finally(() => pool.end());

    // Seeded once, then copied: the worker and the main-thread servers start from the same files.
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'funil-bench-pglite-'));
    const workerDir = path.join(tmp, 'worker');
    const mainDir = path.join(tmp, 'main');
    const t0 = Date.now();
    const seeding = await openDatabase({ pgliteDir: path.join(workerDir, 'db') });
    const onPGlite = await seed({ query: async (sql, params) => ({ rows: await seeding.sql.query(sql, params) }) }, opts);
    await seeding.close();
    fs.cpSync(workerDir, mainDir, { recursive: true });
    env.log(`pglite: ${DEALS} deals seeded in PGlite in ${((Date.now() - t0) / 1000).toFixed(0)} s`);

    const servers: { close(): Promise<void> }[] = [];
    const serve = async (dataDir: string, pgliteWorker: boolean) => {
      const db = await openDatabase({ pgliteDir: path.join(dataDir, 'db'), pgliteWorker });
      // No rate limit, as on the bench's PostgreSQL server (bench/run.ts): one key's load is the point.
      const config = loadConfig({
        RATE_LIMIT_PER_MINUTE: '0',
        ...process.env,
        DATABASE_URL: '',
        DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        PORT: '0',
        REQUIRE_HTTPS: 'false',
        NODE_ENV: 'production',
      });
      const server = await listen(createApp(config, db), config);
      const stopCommitter = startCommitter(() => db.sql.query('SELECT pg_current_xact_id()'));
      servers.push({ close: async () => (stopCommitter(), await server.close(), await db.close()) });
      return server.url;
    };
    const list = (seeded: { listPipelineId: string }) => `/backend/pipelines/${seeded.listPipelineId}/deals?limit=20`;
    const variants = [
      { name: 'PostgreSQL', url: env.serverUrl + list(onPostgres), key: onPostgres.key },
      { name: 'PGlite, worker thread', url: (await serve(workerDir, true)) + list(onPGlite), key: onPGlite.key },
      { name: 'PGlite, main thread', url: (await serve(mainDir, false)) + list(onPGlite), key: onPGlite.key },
    ];

    const best = new Map<string, LoadResult & { cpu: CpuPerRequest }>();
    try {
      for (const v of variants) {
        const res = await fetch(v.url, { headers: { authorization: `Bearer ${v.key}` } });
        const body = (await res.json()) as { data?: unknown[] };
        if (res.status !== 200 || body.data?.length !== 20)
          throw new Error(`pglite: ${v.name} answered ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
      }
      for (const v of variants)
        await autocannon(v.url, { headers: { authorization: `Bearer ${v.key}` }, connections: env.connections, duration: 2 });
      for (let round = 0; round < env.rounds; round++) {
        for (const v of variants) {
          const before = threadCpu();
          const r = await autocannon(v.url, {
            headers: { authorization: `Bearer ${v.key}` },
            connections: env.connections,
            duration: env.duration,
          });
          const cpu = cpuPerRequest(before, threadCpu(), r.requests);
          const prev = best.get(v.name);
          if (!prev || r.rps > prev.rps) best.set(v.name, { ...r, cpu });
        }
      }
    } finally {
      for (const s of servers) await s.close();
      fs.rmSync(tmp, { recursive: true, force: true });
    }

    // A run with failed requests measures the failures (a 429 is fast), not the database: no ratio from it.
    const failed = variants.filter((v) => best.get(v.name)!.errors > 0).map((v) => `${v.name} (${best.get(v.name)!.errors} errors)`);
    if (failed.length) throw new Error(`pglite: requests failed, so no ratio: ${failed.join(', ')}`);
    const postgres = best.get('PostgreSQL')!;
    const ratio = (name: string) => {
      const r = best.get(name)!;
      return { p50: r.p50 / Math.max(postgres.p50, 1), rps: r.rps / postgres.rps };
    };
    const worker = ratio('PGlite, worker thread');
    const main = ratio('PGlite, main thread');
    return {
      report: [
        `Embedded PGlite under load — deals list (limit 20) of a ${DEALS.toLocaleString('en')}-deal pipeline, ${env.connections} connections, ` +
          `${env.duration} s per run, best of ${env.rounds} interleaved runs, load average ${os.loadavg()[0].toFixed(1)}`,
        '',
        `| ${pad('database', 22)} | ${pad('req/s', 8)} | ${pad('p50 ms', 7)} | ${pad('p99 ms', 7)} | ${pad('p50 / PG', 8)} | ${pad('CPU ms/req: main thread, busiest other, whole process', 54)} | errors |`,
        `| ${'-'.repeat(22)} | ${'-'.repeat(8)} | ${'-'.repeat(7)} | ${'-'.repeat(7)} | ${'-'.repeat(8)} | ${'-'.repeat(54)} | ------ |`,
        ...variants.map((v) => {
          const r = best.get(v.name)!;
          const cpu = `${r.cpu.main.toFixed(1)}, ${r.cpu.other.toFixed(1)}, ${r.cpu.all.toFixed(1)}`;
          return `| ${pad(v.name, 22)} | ${pad(r.rps.toFixed(1), 8)} | ${pad(r.p50, 7)} | ${pad(r.p99, 7)} | ${pad((r.p50 / Math.max(postgres.p50, 1)).toFixed(2), 8)} | ${pad(cpu, 54)} | ${r.errors} |`;
        }),
        '',
        `CPU per request is this process's (PostgreSQL's own is not counted); on an idle machine the busiest thread bounds req/s.`,
        `Target: PGlite p50 ≤ 2× PostgreSQL's — worker thread ${worker.p50.toFixed(2)}× (main thread ${main.p50.toFixed(2)}×)`,
      ],
      ratios: { 'pglite p50/PG': worker.p50 },
      summary: [
        `pglite ratios: p50 worker/PG=${worker.p50.toFixed(2)} main/PG=${main.p50.toFixed(2)}; req/s worker/PG=${worker.rps.toFixed(2)} main/PG=${main.rps.toFixed(2)}`,
      ],
    };
  },
};
