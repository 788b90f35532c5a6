// The uploads line of `npm run bench`: upload throughput (MB/s) for 1 MB and 10 MB files through
// `POST /backend/uploads`, and media proxy requests per second for a 100 KB file, each beside a plain
// Node baseline on the same machine: the request body piped into fs.createWriteStream (uploads), and
// fs.createReadStream piped into the response (proxy). autocannon drives both from its own process.
// A second upload baseline shows how much of the gap is Funil's own: plain Node reading the same form
// with busboy (the parser Funil uses) into a file it fsyncs before answering, as Funil makes a file
// durable before its record. It prints apart (`uploads ceiling:`), beside the issue's ratio.
// The uploads of a run are deleted after it (record and file), so disk use stays bounded.
//
// The same rows again on STORAGE=s3: a second app on the same database storing in a bucket of s3rver
// (test/helpers/s3.ts, on loopback, files on this disk), beside a baseline that pipes the body into the
// bucket with the SDK's multipart Upload and pipes GetObject into the response. s3rver is a fake: the
// rows show Funil's cost on top of the S3 protocol, not what AWS S3 or MinIO would do. BENCH_S3=0 skips them.
//
// Alone: `BENCH_ONLY=uploads npm run bench`; BENCH_CPU_PROFILE=<dir> writes a CPU profile of each measured run (bench/cpu-profile.ts). BENCH_UPLOAD_REQUESTS scales the request counts.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import { autocannon, pad, type LoadResult } from './autocannon.js';
import { profiled } from './cpu-profile.js';
import type { BenchEnv, BenchLine } from './line.js';

const MB = 1024 * 1024;
const SCALE = Number(process.env.BENCH_UPLOAD_REQUESTS ?? 1);

export interface UploadBenchRow {
  measure: string;
  unit: 'MB/s' | 'req/s';
  funil: number;
  baseline: number;
  /** Uploads on disk: the multipart + fsync baseline's MB/s. */
  durable?: number;
  errors: number;
}

/** A multipart body with one `file` part of `size` random bytes, written to a file autocannon sends. */
function multipartBody(dir: string, size: number): { file: string; contentType: string } {
  const boundary = `bench-${randomBytes(8).toString('hex')}`;
  const file = path.join(dir, `body-${size}.bin`);
  fs.writeFileSync(
    file,
    Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      randomBytes(size),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]),
  );
  return { file, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Where a baseline writes an uploaded body and reads the served file from: this disk, or a bucket. */
export interface BaselineStore {
  write(body: http.IncomingMessage, name: string): Promise<void>;
  /** The same body read as a form, its file part written and fsynced before the answer (disk only). */
  writeDurable?(body: http.IncomingMessage, name: string): Promise<void>;
  /** Prepares the served file (`bytes`) and returns how to stream it. */
  serve(bytes: Buffer): Promise<() => Promise<NodeJS.ReadableStream>>;
}

function diskBaseline(dir: string): BaselineStore {
  return {
    write: (body, name) => pipeline(body, fs.createWriteStream(path.join(dir, name))),
    writeDurable: (body, name) =>
      new Promise<void>((resolve, reject) => {
        const form = busboy({ headers: body.headers });
        let written: Promise<void> = Promise.reject(new Error('no file part'));
        written.catch(() => {});
        // `flush`: the file is fsynced before its stream closes.
        form.on('file', (_field, file) => (written = pipeline(file, fs.createWriteStream(path.join(dir, name), { flush: true }))));
        form.on('close', () => written.then(resolve, reject));
        form.on('error', reject);
        body.pipe(form);
      }),
    async serve(bytes) {
      const file = path.join(dir, 'served.bin');
      fs.writeFileSync(file, bytes);
      return async () => fs.createReadStream(file);
    },
  };
}

/** The baselines: POST writes the raw body to a new file (or object); GET streams one file (or object). */
async function startBaseline(store: BaselineStore, served: Buffer): Promise<{ url: string; close(): Promise<void> }> {
  let n = 0;
  const read = await store.serve(served);
  const server = http.createServer((req, res) => {
    if (req.method === 'POST') {
      const durable = req.url === '/upload-durable' && store.writeDurable;
      (durable ? store.writeDurable!(req, `upload-${n++}`) : store.write(req, `upload-${n++}`)).then(
        () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'),
        () => res.writeHead(500).end(),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': served.byteLength, 'cache-control': 'public, max-age=86400' });
    read().then(
      (stream) => stream.pipe(res),
      () => res.destroy(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/**
 * Every upload the run stored has `size` bytes: the bench measures the bodies it meant to send (a load
 * generator that re-encoded the body once sent 1.8 times the bytes and had every 10 MB upload refused).
 */
async function expectStoredSizes(opts: { appUrl: string; key: string; tenantId: string }, size: number, except: string) {
  const res = await fetch(`${opts.appUrl}/backend/uploads/tenant/${opts.tenantId}`, { headers: { authorization: `Bearer ${opts.key}` } });
  const wrong = ((await res.json()) as { id: string; size: number }[]).filter((u) => u.id !== except && u.size !== size);
  if (wrong.length) throw new Error(`${wrong.length} uploads stored ${wrong[0].size} bytes instead of ${size}`);
}

/**
 * Runs the uploads benchmark against a running app (`appUrl`, an organisation and its API key) and a
 * baseline it starts itself. `cleanup` removes the uploads made so far (records and files).
 */
export async function benchUploads(opts: {
  appUrl: string;
  key: string;
  tenantId: string;
  connections?: number;
  duration?: number;
  cleanup: () => Promise<void>;
  log: (s: string) => void;
  /** Where the baseline stores (default: files in a temporary directory). */
  baseline?: BaselineStore;
  /** Prefix of the rows' names, e.g. `s3 `. */
  label?: string;
}): Promise<UploadBenchRow[]> {
  const connections = opts.connections ?? 4;
  const label = opts.label ?? '';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'funil-bench-uploads-'));
  const auth = { authorization: `Bearer ${opts.key}` };
  const rows: UploadBenchRow[] = [];
  try {
    // The 100 KB file the proxy serves, uploaded through the app and written for the baseline.
    const proxied = multipartBody(dir, 100 * 1024);
    const created = await fetch(`${opts.appUrl}/backend/uploads`, {
      method: 'POST',
      headers: { ...auth, 'content-type': proxied.contentType },
      body: fs.readFileSync(proxied.file),
    });
    if (created.status !== 200) throw new Error(`upload for the proxy failed: ${created.status} ${await created.text()}`);
    const proxiedUpload = (await created.json()) as { id: string; file_url: string };
    // ASSOCIATED: the cleanups between runs keep it.
    await fetch(`${opts.appUrl}/backend/uploads/${proxiedUpload.id}/status`, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'application/json' },
      body: '{"status":"ASSOCIATED"}',
    });
    const proxyPath = new URL(proxiedUpload.file_url).pathname;
    const baseline = await startBaseline(opts.baseline ?? diskBaseline(dir), randomBytes(100 * 1024));

    for (const [size, amount] of [
      [1 * MB, Math.round(200 * SCALE)],
      [10 * MB, Math.round(40 * SCALE)],
    ] as const) {
      const body = multipartBody(dir, size);
      const upload = { method: 'POST', headers: { 'content-type': body.contentType }, bodyFile: body.file, amount, connections };
      const funil = await profiled(`${label}funil-upload-${size / MB}MB`, () =>
        autocannon(`${opts.appUrl}/backend/uploads`, { ...upload, headers: { ...upload.headers, ...auth } }),
      );
      await expectStoredSizes(opts, size, proxiedUpload.id);
      await opts.cleanup();
      const plain = await profiled(`${label}node-upload-${size / MB}MB`, () => autocannon(`${baseline.url}/upload`, upload));
      const removeBaselineFiles = () => {
        for (const f of fs.readdirSync(dir).filter((f) => f.startsWith('upload-'))) fs.rmSync(path.join(dir, f));
      };
      removeBaselineFiles();
      const durable = (opts.baseline ?? diskBaseline(dir)).writeDurable
        ? await autocannon(`${baseline.url}/upload-durable`, upload)
        : undefined;
      removeBaselineFiles();
      const mbps = (r: LoadResult) => (r.requests * size) / MB / r.seconds;
      rows.push({
        measure: `${label}upload ${size / MB} MB (${amount} requests)`,
        unit: 'MB/s',
        funil: mbps(funil),
        baseline: mbps(plain),
        ...(durable ? { durable: mbps(durable) } : {}),
        errors: funil.errors + plain.errors + (durable?.errors ?? 0),
      });
      opts.log(`uploads: ${label}${size / MB} MB done`);
    }

    const duration = opts.duration ?? 5;
    const funil = await profiled(`${label}funil-proxy`, () =>
      autocannon(`${opts.appUrl}${proxyPath}`, { method: 'GET', headers: {}, duration, connections: 10 }),
    );
    const plain = await profiled(`${label}node-proxy`, () =>
      autocannon(`${baseline.url}/file`, { method: 'GET', headers: {}, duration, connections: 10 }),
    );
    rows.push({
      measure: `${label}proxy 100 KB file`,
      unit: 'req/s',
      funil: funil.requests / funil.seconds,
      baseline: plain.requests / plain.seconds,
      errors: funil.errors + plain.errors,
    });
    opts.log(`uploads: ${label}proxy done`);
    await baseline.close();
    await opts.cleanup();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

/** The same rows with STORAGE=s3: a second app on the same database, storing in a bucket of s3rver. */
async function benchS3Uploads(env: BenchEnv): Promise<UploadBenchRow[]> {
  // An organisation of its own: the size check counts only this run's uploads.
  const { key, tenantId } = await env.organisation('Bench uploads s3');
  const { cleanupExpiredUploads } = await import('../src/domains/uploads/service.js');
  const { createApp } = await import('../src/app.js');
  const { listen } = await import('../src/http/server.js');
  const { startS3 } = await import('../test/helpers/s3.js');
  const { GetObjectCommand } = await import('@aws-sdk/client-s3');
  const { Upload } = await import('@aws-sdk/lib-storage');
  const s3 = await startS3({ bucket: 'funil-bench' });
  const config = { ...env.config, storage: { kind: 's3' as const, ...s3.settings } };
  const app = createApp(config, env.db);
  const server = await listen(app, config);
  const Bucket = s3.bucket;
  const baseline: BaselineStore = {
    write: (body, name) =>
      new Upload({ client: s3.client, params: { Bucket, Key: name, Body: body }, partSize: 5 * MB, queueSize: 1 })
        .done()
        .then(() => undefined),
    async serve(bytes) {
      await new Upload({ client: s3.client, params: { Bucket, Key: 'served', Body: bytes } }).done();
      return async () => (await s3.client.send(new GetObjectCommand({ Bucket, Key: 'served' }))).Body as NodeJS.ReadableStream;
    },
  };
  try {
    return await benchUploads({
      appUrl: server.url,
      key,
      tenantId,
      cleanup: () => cleanupExpiredUploads(env.db.prisma, app.deps.storage, 0).then(() => undefined),
      log: env.log,
      baseline,
      label: 's3 ',
    });
  } finally {
    await server.close();
    await s3.stop();
  }
}

function uploadReport(rows: UploadBenchRow[]): string[] {
  const durable = rows.filter((r) => r.durable !== undefined);
  const ceiling = durable.length
    ? [
        '',
        `| ${pad('beside busboy + fsync in plain Node', 36)} | ${pad('Funil', 10)} | ${pad('busboy + fsync', 14)} | ratio | its ratio to plain Node |`,
        `| ${'-'.repeat(36)} | ${'-'.repeat(10)} | ${'-'.repeat(14)} | ----- | ----------------------- |`,
        ...durable.map(
          (r) =>
            `| ${pad(r.measure, 36)} | ${pad(`${r.funil.toFixed(1)} MB/s`, 10)} | ${pad(`${r.durable!.toFixed(1)} MB/s`, 14)} | ${pad((r.funil / r.durable!).toFixed(2), 5)} | ${(r.durable! / r.baseline).toFixed(2)} |`,
        ),
      ]
    : [];
  return [
    `| ${pad('uploads', 30)} | ${pad('Funil', 10)} | ${pad('baseline', 10)} | ratio | errors |`,
    `| ${'-'.repeat(30)} | ${'-'.repeat(10)} | ${'-'.repeat(10)} | ----- | ------ |`,
    ...rows.map(
      (r) =>
        `| ${pad(r.measure, 30)} | ${pad(`${r.funil.toFixed(1)} ${r.unit}`, 10)} | ${pad(`${r.baseline.toFixed(1)} ${r.unit}`, 10)} | ${pad((r.funil / r.baseline).toFixed(2), 5)} | ${r.errors} |`,
    ),
    ...ceiling,
  ];
}

/**
 * `uploads ceiling: funil/durable 1MB=… 10MB=…; durable/node 1MB=… 10MB=…`: Funil beside plain Node doing
 * the same form parsing and fsync, and what those two alone cost plain Node (disk rows).
 */
function uploadCeiling(rows: UploadBenchRow[]): string | undefined {
  const row = (size: number) => rows.find((r) => r.durable !== undefined && r.measure.startsWith(`upload ${size} MB`));
  const [one, ten] = [row(1), row(10)];
  if (!one || !ten) return undefined;
  const f = (a: number, b: number) => (a / b).toFixed(2);
  return `uploads ceiling: funil/durable 1MB=${f(one.funil, one.durable!)} 10MB=${f(ten.funil, ten.durable!)}; durable/node 1MB=${f(one.durable!, one.baseline)} 10MB=${f(ten.durable!, ten.baseline)}`;
}

/**
 * `uploads/node 1MB=… 10MB=…; proxy/node …`: Funil ÷ plain Node per row of one store (label '' for the
 * directory, 's3 ' for the bucket), the fragment of the bench's last `messaging ratios:` line.
 */
export function uploadRatios(rows: UploadBenchRow[], label = ''): string {
  const ratio = (prefix: string) => {
    const row = rows.find((r) => r.measure.startsWith(`${label}${prefix}`));
    return row ? (row.funil / row.baseline).toFixed(2) : '–';
  };
  return `${label}uploads/node 1MB=${ratio('upload 1 MB')} 10MB=${ratio('upload 10 MB')}; ${label}proxy/node ${ratio('proxy')}`;
}

export const uploadsLine: BenchLine = {
  name: 'uploads',
  async run(env) {
    const { cleanupExpiredUploads } = await import('../src/domains/uploads/service.js');
    const { key, tenantId } = await env.organisation('Bench uploads');
    const rows = await benchUploads({
      appUrl: env.serverUrl,
      key,
      tenantId,
      cleanup: () => cleanupExpiredUploads(env.db.prisma, env.app.deps.storage, 0).then(() => undefined),
      log: env.log,
    });
    // The summary's ratios: the disk rows (no label), by their measure.
    const ratio = (measure: RegExp) => {
      const r = rows.find((row) => measure.test(row.measure));
      return r && r.funil / r.baseline;
    };
    const ratios = {
      'uploads/node 1MB': ratio(/^upload 1 MB/),
      'uploads/node 10MB': ratio(/^upload 10 MB/),
      'proxy/node': ratio(/^proxy /),
    };
    const summary = [`uploads ratios: ${uploadRatios(rows)}`];
    const ceiling = uploadCeiling(rows);
    if (ceiling) summary.push(ceiling);
    if (process.env.BENCH_S3 !== '0') {
      rows.push(...(await benchS3Uploads(env)));
      summary[0] += `; ${uploadRatios(rows, 's3 ')}`;
    }
    return { report: uploadReport(rows), summary, ratios };
  },
};
