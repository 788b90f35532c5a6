// The uploads line of `npm run bench`: upload throughput (MB/s) for 1 MB and 10 MB files through
// `POST /backend/uploads`, and media proxy requests per second for a 100 KB file, each beside a plain
// Node baseline on the same machine: the request body piped into fs.createWriteStream (uploads), and
// fs.createReadStream piped into the response (proxy). autocannon drives both from its own process.
// The uploads of a run are deleted after it (record and file), so disk use stays bounded.
//
// Run alone: `tsx bench/uploads.ts` (PostgreSQL schema funil_bench_uploads, recreated and dropped;
// BENCH_DATABASE_URL as for the deals benchmark). BENCH_UPLOAD_REQUESTS scales the request counts.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const MB = 1024 * 1024;
const SCALE = Number(process.env.BENCH_UPLOAD_REQUESTS ?? 1);

export interface UploadBenchRow {
  measure: string;
  unit: 'MB/s' | 'req/s';
  funil: number;
  baseline: number;
  errors: number;
}

interface Run {
  requests: number;
  seconds: number;
  errors: number;
}

/** autocannon in its own process: a fixed number of requests (`amount`) or a duration. */
function autocannon(url: string, opts: { method: string; headers: Record<string, string>; bodyFile?: string; amount?: number; duration?: number; connections: number }): Promise<Run> {
  const bin = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
  const args = [bin, '-j', '-c', String(opts.connections), '-m', opts.method];
  if (opts.amount) args.push('-a', String(opts.amount));
  else args.push('-d', String(opts.duration ?? 5));
  for (const [k, v] of Object.entries(opts.headers)) args.push('-H', `${k}=${v}`);
  if (opts.bodyFile) args.push('-i', opts.bodyFile);
  args.push(url);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited with ${code}`));
      const r = JSON.parse(out);
      resolve({ requests: r['2xx'], seconds: r.duration, errors: r.errors + r.non2xx + r.timeouts });
    });
  });
}

/** A multipart body with one `file` part of `size` random bytes, written to a file autocannon sends. */
function multipartBody(dir: string, size: number): { file: string; contentType: string } {
  const boundary = `bench-${randomBytes(8).toString('hex')}`;
  const file = path.join(dir, `body-${size}.bin`);
  fs.writeFileSync(
    file,
    Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`),
      randomBytes(size),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]),
  );
  return { file, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** The baselines: POST writes the raw body to a new file; GET streams one file with fs.createReadStream. */
async function startBaseline(dir: string, served: { file: string; size: number }): Promise<{ url: string; close(): Promise<void> }> {
  let n = 0;
  const server = http.createServer((req, res) => {
    if (req.method === 'POST') {
      const out = fs.createWriteStream(path.join(dir, `upload-${n++}`));
      req.pipe(out).on('finish', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
      return;
    }
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': served.size, 'cache-control': 'public, max-age=86400' });
    fs.createReadStream(served.file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/**
 * Runs the uploads benchmark against a running app (`appUrl`, an API key of an organisation) and a
 * baseline it starts itself. `cleanup` removes the uploads made so far (records and files).
 */
export async function benchUploads(opts: { appUrl: string; key: string; connections?: number; duration?: number; cleanup: () => Promise<void>; log: (s: string) => void }): Promise<UploadBenchRow[]> {
  const connections = opts.connections ?? 4;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'funil-bench-uploads-'));
  const auth = { authorization: `Bearer ${opts.key}` };
  const rows: UploadBenchRow[] = [];
  try {
    // The 100 KB file the proxy serves, uploaded through the app and written for the baseline.
    const proxied = multipartBody(dir, 100 * 1024);
    const created = await fetch(`${opts.appUrl}/backend/uploads`, { method: 'POST', headers: { ...auth, 'content-type': proxied.contentType }, body: fs.readFileSync(proxied.file) });
    if (created.status !== 200) throw new Error(`upload for the proxy failed: ${created.status} ${await created.text()}`);
    const proxiedUpload = (await created.json()) as { id: string; file_url: string };
    // ASSOCIATED: the cleanups between runs keep it.
    await fetch(`${opts.appUrl}/backend/uploads/${proxiedUpload.id}/status`, { method: 'PUT', headers: { ...auth, 'content-type': 'application/json' }, body: '{"status":"ASSOCIATED"}' });
    const proxyPath = new URL(proxiedUpload.file_url).pathname;
    const servedFile = path.join(dir, 'served.bin');
    fs.writeFileSync(servedFile, randomBytes(100 * 1024));
    const baseline = await startBaseline(dir, { file: servedFile, size: 100 * 1024 });

    for (const [size, amount] of [
      [1 * MB, Math.round(200 * SCALE)],
      [10 * MB, Math.round(40 * SCALE)],
    ] as const) {
      const body = multipartBody(dir, size);
      const upload = { method: 'POST', headers: { 'content-type': body.contentType }, bodyFile: body.file, amount, connections };
      const funil = await autocannon(`${opts.appUrl}/backend/uploads`, { ...upload, headers: { ...upload.headers, ...auth } });
      await opts.cleanup();
      const plain = await autocannon(`${baseline.url}/upload`, upload);
      for (const f of fs.readdirSync(dir).filter((f) => f.startsWith('upload-'))) fs.rmSync(path.join(dir, f));
      const mbps = (r: Run) => (r.requests * size) / MB / r.seconds;
      rows.push({ measure: `upload ${size / MB} MB (${amount} requests)`, unit: 'MB/s', funil: mbps(funil), baseline: mbps(plain), errors: funil.errors + plain.errors });
      opts.log(`uploads: ${size / MB} MB done`);
    }

    const duration = opts.duration ?? 5;
    const funil = await autocannon(`${opts.appUrl}${proxyPath}`, { method: 'GET', headers: {}, duration, connections: 10 });
    const plain = await autocannon(`${baseline.url}/file`, { method: 'GET', headers: {}, duration, connections: 10 });
    rows.push({ measure: 'proxy 100 KB file', unit: 'req/s', funil: funil.requests / funil.seconds, baseline: plain.requests / plain.seconds, errors: funil.errors + plain.errors });
    opts.log('uploads: proxy done');
    await baseline.close();
    await opts.cleanup();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

export function printUploadRows(rows: UploadBenchRow[]) {
  const pad = (v: string | number, n: number) => String(v).padEnd(n);
  console.log(`\n| ${pad('uploads', 28)} | ${pad('Funil', 10)} | ${pad('baseline', 10)} | ratio | errors |`);
  console.log(`| ${'-'.repeat(28)} | ${'-'.repeat(10)} | ${'-'.repeat(10)} | ----- | ------ |`);
  for (const r of rows) {
    console.log(`| ${pad(r.measure, 28)} | ${pad(`${r.funil.toFixed(1)} ${r.unit}`, 10)} | ${pad(`${r.baseline.toFixed(1)} ${r.unit}`, 10)} | ${pad((r.funil / r.baseline).toFixed(2), 5)} | ${r.errors} |`);
  }
}

/** `tsx bench/uploads.ts`: the uploads line alone, on a fresh PostgreSQL schema and storage directory. */
async function main() {
  process.env.NODE_ENV = 'production';
  process.env.LOG_LEVEL ??= 'silent';
  const pg = (await import('pg')).default;
  const { openDatabase } = await import('../src/db/client.js');
  const { loadConfig } = await import('../src/config.js');
  const { createApp } = await import('../src/app.js');
  const { listen } = await import('../src/http/server.js');
  const { createOrganisation } = await import('../src/domains/accounts/service.js');
  const dbUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = 'funil_bench_uploads';
  const dropSchema = async () => {
    const admin = new pg.Client({ connectionString: dbUrl });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  };
  await dropSchema();
  const storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'funil-bench-storage-'));
  const databaseUrl = `${dbUrl}?schema=${schema}`;
  const db = await openDatabase({ databaseUrl, poolSize: 10 });
  const { api_key } = await createOrganisation(db.prisma, { name: 'Bench uploads' });
  const config = loadConfig({ ...process.env, DATABASE_URL: databaseUrl, STORAGE_DIR: storageDir, HOST: '127.0.0.1', PORT: '0', REQUIRE_HTTPS: 'false', NODE_ENV: 'production' });
  const app = createApp(config, db);
  const server = await listen(app, config);
  const { cleanupExpiredUploads } = await import('../src/domains/uploads/service.js');
  const rows = await benchUploads({
    appUrl: server.url,
    key: api_key,
    cleanup: () => cleanupExpiredUploads(db.prisma, app.deps.storage, 0).then(() => undefined),
    log: (s) => console.log(`[bench] ${s}`),
  });
  await server.close();
  await db.close();
  await dropSchema();
  fs.rmSync(storageDir, { recursive: true, force: true });
  console.log(`\nFunil uploads benchmark — ${os.cpus().length} cores, node ${process.version}, load average ${os.loadavg()[0].toFixed(1)}`);
  printUploadRows(rows);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
