// `npm run bench`: one Funil server (in-process, NODE_ENV=production) on a fresh PostgreSQL schema,
// driven over HTTP by autocannon in its own process; each line measures one feature beside a baseline
// doing the same work by hand (raw SQL, plain Node) in the same run, so ratios compare run to run.
//
// Lines (bench/<line>.ts), run in this order; BENCH_ONLY=deals,uploads runs only those:
//   deals     deals list (limit 20, 100) and board: REST, GraphQL, raw SQL; the list also PostGraphile V5
//   kanban    the README's board query (stages × deals(first: 20) × lead): GraphQL, raw SQL, PostGraphile V5
//   webhooks  events committed → delivered to a loopback receiver (events/s, delay)
//   uploads   upload MB/s (1 MB, 10 MB) and media proxy req/s beside plain Node
//   knowledge knowledge search over 100,000 items (rotating queries): REST beside the raw full-text query
//   conversations  conversations list (limit 20, 100) over 10,000 conversations and 1M messages: REST, raw SQL
//   inbound   inbound messages per second (POST /backend/channels/{id}/inbound): REST, raw SQL
//   cloud-webhook  signed WhatsApp Cloud notifications (messages and statuses): events/s and ack p99, raw SQL
//   cadences  10,000 cadence sends due at once, drained to a loopback Cloud API: sends/s and lateness p99, a raw SQL loop
//   routing   inbound messages into a department with routing on beside one with it off: msg/s, on ÷ off
//   pglite    deals list at 10 connections on embedded PGlite (worker thread, main thread) beside PostgreSQL
//   metrics   the same REST route with the Prometheus metrics off and on: µs per request
//   fairness  organisation B's p99 with A flooding ÷ without: extraction, webhook deliveries; the rate limiter's µs
//   sync      a sync page (updated_since, a cursor halfway) beside the first page: leads and deals, REST
//   subscribers  10,000 live subscribers (WebSocket and SSE) on one process, 100 events/s: p99, MB per 1,000
//
// Environment: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), BENCH_DURATION
// seconds per measured run (10), BENCH_CONNECTIONS (10), BENCH_ROUNDS (2: best of interleaved runs),
// BENCH_SCHEMA (funil_bench), BENCH_KEEP=1 keeps it after the run (dropped otherwise); each line documents its own.
// A FileHandle left open on any path fails the run (exit 1): Node's DEP0137 warning, with a full
// collection forced after each line so the leak is charged to its line (bench/leak-guard.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { collectLeaks, enterLine, fileHandleLeaks } from './leak-guard.js';
import { ratiosLine, type BenchEnv, type BenchLine } from './line.js';
import { COMMITS_PER_SECOND, startCommitter } from './committer.js';

process.env.NODE_ENV = 'production';
// autocannon closes its sockets with requests in flight at the end of each run; those aborted requests
// would be logged as errors. Failures are counted by autocannon (non-2xx, errors) instead.
process.env.LOG_LEVEL ??= 'silent';

const DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
// BENCH_SCHEMA: two benches on one server need two schemas.
const SCHEMA = process.env.BENCH_SCHEMA ?? 'funil_bench';

const log = (s: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${s}`);

async function lines(): Promise<BenchLine[]> {
  const all: BenchLine[] = [
    (await import('./deals.js')).dealsLine,
    (await import('./kanban.js')).kanbanLine,
    (await import('./webhooks.js')).webhooksLine,
    (await import('./uploads.js')).uploadsLine,
    (await import('./knowledge.js')).knowledgeLine,
    (await import('./messaging.js')).conversationsLine,
    (await import('./messaging.js')).inboundLine,
    (await import('./cloud-webhook.js')).cloudWebhookLine,
    (await import('./cadences.js')).cadencesLine,
    (await import('./routing.js')).routingLine,
    (await import('./pglite.js')).pgliteLine,
    (await import('./metrics.js')).metricsLine,
    (await import('./fairness.js')).fairnessLine,
    (await import('./sync.js')).syncLine,
    (await import('./subscribers.js')).subscribersLine,
  ];
  const only = process.env.BENCH_ONLY?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!only) return all;
  const unknown = only.filter((n) => !all.some((l) => l.name === n));
  if (unknown.length) throw new Error(`BENCH_ONLY: unknown line(s) ${unknown.join(', ')}; lines: ${all.map((l) => l.name).join(', ')}`);
  return all.filter((l) => only.includes(l.name));
}

async function dropSchema() {
  const admin = new pg.Client({ connectionString: DB_URL });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  const {
    rows: [{ server_version: version }],
  } = await admin.query('SHOW server_version');
  await admin.end();
  return version as string;
}

/** The writer of BENCH_COMMITS_PER_SECOND on the bench's server (bench/committer.ts); stopping it logs what it did. */
async function startServerCommitter(): Promise<() => Promise<void>> {
  if (!(COMMITS_PER_SECOND > 0)) return async () => {};
  const client = new pg.Client({ connectionString: DB_URL });
  await client.connect();
  const t0 = Date.now();
  const stop = startCommitter(() => client.query('SELECT pg_current_xact_id()'));
  log(`committer: ${COMMITS_PER_SECOND} transactions a second asked of the bench server`);
  return async () => {
    const commits = stop();
    await client.end();
    log(`committer: ${commits} transactions committed in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  };
}

async function main() {
  const started = Date.now();
  const selected = await lines();
  const machine = `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`;
  log(`machine: ${machine}; load average ${os.loadavg()[0].toFixed(1)}`);
  const version = await dropSchema();
  log(`PostgreSQL ${version}; schema ${SCHEMA} recreated; lines: ${selected.map((l) => l.name).join(', ')}`);

  const { openDatabase } = await import('../src/db/client.js');
  const { benchServerConfig } = await import('./server-config.js');
  const { createApp } = await import('../src/app.js');
  const { listen } = await import('../src/http/server.js');
  const { createOrganisation } = await import('../src/domains/accounts/service.js');

  const databaseUrl = `${DB_URL}?schema=${SCHEMA}`;
  const db = await openDatabase({ databaseUrl, poolSize: 10 });
  const storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'funil-bench-storage-'));
  const config = benchServerConfig(databaseUrl, storageDir);
  const app = createApp(config, db);
  const server = await listen(app, config);
  const env: BenchEnv = {
    db,
    config,
    app,
    serverUrl: server.url,
    dbUrl: DB_URL,
    schema: SCHEMA,
    connections: Number(process.env.BENCH_CONNECTIONS ?? 10),
    duration: Number(process.env.BENCH_DURATION ?? 10),
    rounds: Number(process.env.BENCH_ROUNDS ?? 2),
    log,
    organisation: async (name) => {
      const org = await createOrganisation(db.prisma, { name });
      return { tenantId: org.tenant.id, key: org.api_key };
    },
  };

  const stopCommitter = await startServerCommitter();
  const results: { line: string; report: string[]; summary: string[]; last: string[] }[] = [];
  const ratios: Record<string, number> = {};
  try {
    for (const line of selected) {
      const t0 = Date.now();
      enterLine(line.name);
      const r = await line.run(env);
      await collectLeaks();
      results.push({ line: line.name, report: r.report, summary: r.summary ?? [], last: r.last ?? [] });
      Object.assign(ratios, r.ratios);
      log(`${line.name}: ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    }
  } finally {
    await stopCommitter();
    await server.close();
    await db.close();
    fs.rmSync(storageDir, { recursive: true, force: true });
    // The seeded data is large; leave the shared database as it was (BENCH_KEEP=1 keeps it to explore).
    if (!process.env.BENCH_KEEP) await dropSchema();
  }

  console.log(
    `\nFunil benchmark — ${machine}, PostgreSQL ${version}, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  for (const r of results) console.log(`\n${r.report.join('\n')}`);
  log(`total ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const summaries = results.flatMap((r) => r.summary);
  // Last: the issue 25 targets in one line, whichever lines ran (`–` for a ratio not measured).
  console.log(`\n${[...summaries, ratiosLine(ratios), ...results.flatMap((r) => r.last)].join('\n')}`);
  await collectLeaks();
  const leaks = fileHandleLeaks();
  if (leaks.length) {
    // A FileHandle closed by the garbage collector (DEP0137) is a descriptor leaked on some path.
    console.error(`\nFAILED: ${leaks.length} FileHandle(s) left open (DEP0137):\n${leaks.join('\n')}`);
    process.exitCode = 1;
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
