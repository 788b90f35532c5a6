// autocannon in its own process (the load generator must not share the servers' event loop).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

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
}

const require = createRequire(import.meta.url);

export function autocannon(url: string, opts: LoadOptions): Promise<LoadResult> {
  const args = [require.resolve('autocannon/autocannon.js'), '-j', '-c', String(opts.connections), '-m', opts.method ?? 'GET'];
  if (opts.amount) args.push('-a', String(opts.amount));
  else args.push('-d', String(opts.duration ?? 5));
  for (const [k, v] of Object.entries(opts.headers ?? {})) args.push('-H', `${k}=${v}`);
  if (opts.body) args.push('-b', opts.body);
  if (opts.bodyFile) args.push('-i', opts.bodyFile);
  args.push(url);
  return run(args);
}

/**
 * GET requests over several paths of one server (`base` + each path), each connection cycling through
 * them in order: autocannon's `requests` option, which its command line lacks, through its API in a
 * process of its own.
 */
export function autocannonPaths(base: string, paths: string[], opts: Pick<LoadOptions, 'headers' | 'connections' | 'duration'>): Promise<LoadResult> {
  const config = { url: base, connections: opts.connections, duration: opts.duration ?? 5, headers: opts.headers ?? {}, requests: paths.map((path) => ({ method: 'GET', path })) };
  const script = `require(${JSON.stringify(require.resolve('autocannon'))})(JSON.parse(process.argv[1]), (error, result) => {
    if (error) { console.error(error); process.exit(1); }
    process.stdout.write(JSON.stringify(result));
  });`;
  return run(['-e', script, JSON.stringify(config)]);
}

/** Runs node with the arguments; its standard output is autocannon's JSON result. */
function run(args: string[]): Promise<LoadResult> {
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
