// `npm run bench`: seeds the local PostgreSQL (schema funil_bench, recreated each run), starts the real
// server in-process and a hand-written raw-SQL server, drives both over HTTP with autocannon (a separate
// process, so the load generator does not share the servers' event loop), and prints throughput,
// p50/p99 and SQL statements per request for (a) REST, (b) the same GraphQL query, (c) raw SQL; then the
// uploads line (bench/uploads.ts: upload MB/s and media proxy req/s beside plain Node baselines).
//
// Environment: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), BENCH_DURATION
// seconds per scenario (default 10), BENCH_CONNECTIONS (default 10), BENCH_LIST_DEALS (100000),
// BENCH_BOARD_DEALS (1000000), BENCH_LEADS (50000), BENCH_ROUNDS (2: best of two interleaved runs),
// BENCH_KEEP=1 to keep the schema after the run (it is dropped otherwise). Webhooks: BENCH_WEBHOOK_EVENTS
// (default 2000) events from BENCH_WEBHOOK_PRODUCERS (10) concurrent transactions; BENCH_ONLY=webhooks
// runs only that line (no seeding).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';

process.env.NODE_ENV = 'production';
// autocannon closes its sockets with requests in flight at the end of each run; those aborted requests
// would be logged as errors. Failures are counted by autocannon (non-2xx, errors) instead.
process.env.LOG_LEVEL ??= 'silent';

const DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SCHEMA = 'funil_bench';
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const POOL = 10;
const LIST_DEALS = Number(process.env.BENCH_LIST_DEALS ?? 100_000);
const BOARD_DEALS = Number(process.env.BENCH_BOARD_DEALS ?? 1_000_000);
const LEADS = Number(process.env.BENCH_LEADS ?? 50_000);
/** Each scenario runs (a), (b), (c) in turn this many times; the best run of each is kept (less noise from other load). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const WEBHOOK_EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 2000);
const WEBHOOK_PRODUCERS = Number(process.env.BENCH_WEBHOOK_PRODUCERS ?? 10);
const ONLY_WEBHOOKS = process.env.BENCH_ONLY === 'webhooks';

const log = (s: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${s}`);

interface Result {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  statements: number;
}

function autocannon(url: string, opts: { method?: string; headers: Record<string, string>; body?: string; duration?: number }): Promise<Omit<Result, 'statements'>> {
  const bin = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
  const args = [bin, '-j', '-c', String(CONNECTIONS), '-d', String(opts.duration ?? DURATION), '-m', opts.method ?? 'GET'];
  for (const [k, v] of Object.entries(opts.headers)) args.push('-H', `${k}=${v}`);
  if (opts.body) args.push('-b', opts.body);
  args.push(url);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited with ${code}`));
      const r = JSON.parse(out);
      resolve({ rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.non2xx + r.timeouts });
    });
  });
}

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

async function main() {
  const started = Date.now();
  log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`);
  const admin = new pg.Client({ connectionString: DB_URL });
  await admin.connect();
  const { rows: [{ server_version: version }] } = await admin.query('SHOW server_version');
  log(`PostgreSQL ${version}; recreating schema ${SCHEMA}`);
  await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  await admin.end();

  const { openDatabase } = await import('../src/db/client.js');
  const { loadConfig } = await import('../src/config.js');
  const { createApp } = await import('../src/app.js');
  const { listen } = await import('../src/http/server.js');
  const { totalStatements } = await import('../src/db/statements.js');
  const { seed } = await import('./seed.js');
  const { startRawServer } = await import('./raw-server.js');

  const url = `${DB_URL}?schema=${SCHEMA}`;
  const db = await openDatabase({ databaseUrl: url, poolSize: POOL });
  const seedPool = new pg.Pool({ connectionString: DB_URL, max: 2, options: `-c search_path="${SCHEMA}"` });
  const t0 = Date.now();
  const seeded = ONLY_WEBHOOKS ? await webhooksOnlyOrganisation(db) : await seed(seedPool, { leads: LEADS, listDeals: LIST_DEALS, boardDeals: BOARD_DEALS, log });
  await seedPool.end();
  log(`seeded in ${((Date.now() - t0) / 1000).toFixed(0)} s`);

  const storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'funil-bench-storage-'));
  // Private URLs allowed: the webhooks line delivers to a receiver on loopback.
  const config = loadConfig({ ...process.env, DATABASE_URL: url, STORAGE_DIR: storageDir, HOST: '127.0.0.1', PORT: '0', REQUIRE_HTTPS: 'false', NODE_ENV: 'production', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
  const app = createApp(config, db);
  const server = await listen(app, config);
  const raw = await startRawServer(DB_URL, SCHEMA, POOL);
  const auth = { authorization: `Bearer ${seeded.key}` };

  const scenarios = ONLY_WEBHOOKS ? [] : [
    { name: 'deals list, limit 20', duration: DURATION, rest: `/backend/pipelines/${seeded.listPipelineId}/deals?limit=20`, raw: `/pipelines/${seeded.listPipelineId}/deals?limit=20`, field: 'pipelineDeals', args: `id: "${seeded.listPipelineId}", limit: 20` },
    { name: 'deals list, limit 100', duration: DURATION, rest: `/backend/pipelines/${seeded.listPipelineId}/deals?limit=100`, raw: `/pipelines/${seeded.listPipelineId}/deals?limit=100`, field: 'pipelineDeals', args: `id: "${seeded.listPipelineId}", limit: 100` },
    { name: `board (${(BOARD_DEALS / 1e6).toFixed(1)}M deals)`, duration: 2 * DURATION, rest: `/backend/pipelines/${seeded.boardPipelineId}/board`, raw: `/pipelines/${seeded.boardPipelineId}/board`, field: 'pipelineBoard', args: `id: "${seeded.boardPipelineId}"` },
  ];

  const rows: { scenario: string; variant: string; r: Result }[] = [];
  for (const s of scenarios) {
    // One request of each kind, sequential: the JSON must agree, and we count SQL statements.
    const restBefore = totalStatements.count;
    const restRes = await fetch(server.url + s.rest, { headers: auth });
    const restJson = await restRes.json();
    const restStatements = totalStatements.count - restBefore;
    if (restRes.status !== 200) throw new Error(`${s.name}: REST ${restRes.status} ${JSON.stringify(restJson)}`);
    const query = `query Bench { ${s.field}(${s.args}) { ${selectionOf(restJson)} } }`;
    const gqlBody = JSON.stringify({ query });
    const gqlBefore = totalStatements.count;
    const gqlRes = await fetch(server.url + '/graphql', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: gqlBody });
    const gqlJson = (await gqlRes.json()) as { data?: Record<string, unknown>; errors?: unknown };
    const gqlStatements = totalStatements.count - gqlBefore;
    if (gqlJson.errors) throw new Error(`${s.name}: GraphQL ${JSON.stringify(gqlJson.errors)}`);
    const rawBefore = raw.statements.count;
    const rawJson = await (await fetch(raw.url + s.raw, { headers: auth })).json();
    const rawStatements = raw.statements.count - rawBefore;
    const sameGql = isDeepStrictEqual(gqlJson.data?.[s.field], restJson);
    const sameRaw = isDeepStrictEqual(rawJson, restJson);
    log(`${s.name}: same JSON — GraphQL ${sameGql ? 'yes' : 'NO'}, raw ${sameRaw ? 'yes' : 'NO'}`);

    // Warm-up, then ROUNDS interleaved runs of (a), (b), (c); the best of each is kept.
    const gqlOpts = { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: gqlBody };
    const variants = [
      { variant: '(a) REST', url: server.url + s.rest, opts: { headers: auth }, statements: restStatements },
      { variant: '(b) GraphQL', url: server.url + '/graphql', opts: gqlOpts, statements: gqlStatements },
      { variant: '(c) raw SQL', url: raw.url + s.raw, opts: { headers: auth }, statements: rawStatements },
    ];
    for (const v of variants) await autocannon(v.url, { ...v.opts, duration: 2 });
    const best = new Map<string, Result>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const v of variants) {
        const r = await autocannon(v.url, { ...v.opts, duration: s.duration });
        const prev = best.get(v.variant);
        if (!prev || r.rps > prev.rps) best.set(v.variant, { ...r, statements: v.statements });
      }
    }
    for (const v of variants) rows.push({ scenario: s.name, variant: v.variant, r: best.get(v.variant)! });
    log(`${s.name}: done`);
  }

  log(`webhooks: ${WEBHOOK_EVENTS} events, ${WEBHOOK_PRODUCERS} producers`);
  const { benchWebhooks } = await import('./webhooks.js');
  const hooks = await benchWebhooks({ db, config, serverUrl: server.url, key: seeded.key, tenantId: seeded.tenantId, events: WEBHOOK_EVENTS, producers: WEBHOOK_PRODUCERS, log });
  const { benchUploads, printUploadRows } = await import('./uploads.js');
  const { cleanupExpiredUploads } = await import('../src/domains/uploads/service.js');
  const cleanupUploads = () => cleanupExpiredUploads(db.prisma, app.deps.storage, 0).then(() => undefined);
  const uploadRows = await benchUploads({ appUrl: server.url, key: seeded.key, cleanup: cleanupUploads, log });

  await server.close();
  fs.rmSync(storageDir, { recursive: true, force: true });
  await raw.close();
  await db.close();
  if (!process.env.BENCH_KEEP) {
    // The seeded data is large; leave the shared database as it was (BENCH_KEEP=1 keeps it to explore).
    const cleanup = new pg.Client({ connectionString: DB_URL });
    await cleanup.connect();
    await cleanup.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await cleanup.end();
  }

  const pad = (v: string | number, n: number) => String(v).padEnd(n);
  console.log(`\nFunil deals benchmark — ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, PostgreSQL ${version}, ${CONNECTIONS} connections, ${DURATION} s per list run, ${2 * DURATION} s per board run, best of ${ROUNDS} interleaved runs`);
  console.log(`data: ${LIST_DEALS.toLocaleString('en')} deals (list pipeline), ${BOARD_DEALS.toLocaleString('en')} deals (board pipeline), ${LEADS.toLocaleString('en')} leads, 200 products\n`);
  console.log(`| ${pad('scenario', 22)} | ${pad('variant', 12)} | ${pad('req/s', 8)} | ${pad('p50 ms', 7)} | ${pad('p99 ms', 7)} | ${pad('SQL/req', 7)} | errors |`);
  console.log(`| ${'-'.repeat(22)} | ${'-'.repeat(12)} | ${'-'.repeat(8)} | ${'-'.repeat(7)} | ${'-'.repeat(7)} | ${'-'.repeat(7)} | ------ |`);
  for (const { scenario, variant, r } of rows) {
    console.log(`| ${pad(scenario, 22)} | ${pad(variant, 12)} | ${pad(r.rps.toFixed(1), 8)} | ${pad(r.p50, 7)} | ${pad(r.p99, 7)} | ${pad(r.statements, 7)} | ${r.errors} |`);
  }
  console.log('\nTargets:');
  for (const s of scenarios) {
    const [a, b, c] = rows.filter((r) => r.scenario === s.name).map((r) => r.r);
    const isBoard = s.field === 'pipelineBoard';
    const checks = [
      `(a)/(c) throughput ${(a.rps / c.rps).toFixed(2)}× (target ≥ ${isBoard ? '0.87' : '0.5'})`,
      `(a) p50 / (b) p50 ${(a.p50 / Math.max(b.p50, 1)).toFixed(2)}× (target ≤ 1.1)`,
      isBoard ? `(a) p50 / (c) p50 ${(a.p50 / Math.max(c.p50, 1)).toFixed(2)}× (target ≤ 1.15)` : `statements (a) ${a.statements} (target ≤ 6, same for 20 and 100)`,
    ];
    console.log(`- ${s.name}: ${checks.join('; ')}`);
  }
  console.log(
    `\nWebhooks (commit → 2xx on a loopback receiver, ${WEBHOOK_PRODUCERS} producers, WORKER_CONCURRENCY ${config.workerConcurrency}): ` +
      `${hooks.events} events, ${hooks.eventsPerSecond.toFixed(1)} events/s, delay p50 ${hooks.p50} ms, p99 ${hooks.p99} ms` +
      (hooks.failed ? `, ${hooks.failed} NOT DELIVERED within 120 s` : ''),
  );
  printUploadRows(uploadRows);
  log(`total ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

/** BENCH_ONLY=webhooks: an organisation with an owner key, without the deals data. */
async function webhooksOnlyOrganisation(db: import('../src/db/client.js').Database) {
  const { createOrganisation } = await import('../src/domains/accounts/service.js');
  const org = await createOrganisation(db.prisma, { name: 'Bench webhooks' });
  return { tenantId: org.tenant.id, key: org.api_key, listPipelineId: '', boardPipelineId: '' };
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
