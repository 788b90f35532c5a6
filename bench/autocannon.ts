// autocannon in its own process (the load generator must not share the servers' event loop): the CLI,
// or its programmatic API (autocannon-vary.ts) when the body must change from request to request.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export interface LoadResult {
  /** Average requests per second, latency percentiles in ms, and 2xx answers over the run's seconds. */
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  seconds: number;
  /** Connection errors, timeouts and non-2xx answers. */
  errors: number;
}

export interface LoadOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** A file sent as each request's body (autocannon -i). */
  bodyFile?: string;
  connections: number;
  /** A fixed number of requests, or else a duration in seconds. */
  amount?: number;
  duration?: number;
  /** Each `placeholder` in `body` becomes `first + (n mod count)`, n counting the requests (e.g. `count` senders). */
  vary?: { placeholder: string; first: number; count: number };
}

function cliArgs(url: string, opts: LoadOptions): string[] {
  if (opts.vary) return ['--import', 'tsx', fileURLToPath(new URL('./autocannon-vary.ts', import.meta.url)), JSON.stringify({ url, opts })];
  const bin = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
  const args = [bin, '-j', '-c', String(opts.connections), '-m', opts.method ?? 'GET'];
  if (opts.amount) args.push('-a', String(opts.amount));
  else args.push('-d', String(opts.duration ?? 5));
  for (const [k, v] of Object.entries(opts.headers ?? {})) args.push('-H', `${k}=${v}`);
  if (opts.body) args.push('-b', opts.body);
  if (opts.bodyFile) args.push('-i', opts.bodyFile);
  args.push(url);
  return args;
}

export function autocannon(url: string, opts: LoadOptions): Promise<LoadResult> {
  const args = cliArgs(url, opts);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited with ${code}`));
      const r = JSON.parse(out);
      resolve({ rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, requests: r['2xx'], seconds: r.duration, errors: r.errors + r.non2xx + r.timeouts });
    });
  });
}

export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

export const pad = (v: string | number, n: number) => String(v).padEnd(n);
