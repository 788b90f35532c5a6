// autocannon in its own process (the load generator must not share the servers' event loop), through its
// programmatic API (autocannon-process.ts).
import { spawn } from 'node:child_process';
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
  /** A file sent as each request's body, byte for byte. */
  bodyFile?: string;
  connections: number;
  /** A fixed number of requests, or else a duration in seconds. */
  amount?: number;
  duration?: number;
  /** GET these paths of the url's server in turn on each connection (autocannon's `requests`). */
  paths?: string[];
  /** Each `placeholder` in `body` becomes `first + (n mod count)`, n counting the requests (e.g. `count` senders). */
  vary?: { placeholder: string; first: number; count: number };
}

/** Run with tsx, so it needs no build step like the rest of the bench. */
const loadProcess = fileURLToPath(new URL('./autocannon-process.ts', import.meta.url));

export function autocannon(url: string, opts: LoadOptions): Promise<LoadResult> {
  const args = ['--import', 'tsx', loadProcess, JSON.stringify({ ...opts, url })];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited with ${code}`));
      const r = JSON.parse(out);
      // A fixed amount: its own timing (autocannon's duration and per-second samples are whole seconds).
      const seconds = opts.amount ? r.elapsedSeconds : r.duration;
      resolve({
        rps: opts.amount ? r['2xx'] / seconds : r.requests.average,
        p50: r.latency.p50,
        p99: r.latency.p99,
        requests: r['2xx'],
        seconds,
        errors: r.errors + r.non2xx + r.timeouts,
      });
    });
  });
}

/** GET requests over several paths of one server (`base` + each path), each connection cycling through them. */
export function autocannonPaths(
  base: string,
  paths: string[],
  opts: Pick<LoadOptions, 'headers' | 'connections' | 'duration'>,
): Promise<LoadResult> {
  return autocannon(base, { ...opts, paths });
}

export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

export const pad = (v: string | number, n: number) => String(v).padEnd(n);
