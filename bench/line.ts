// What every line of `npm run bench` gets and gives. bench/run.ts sets up one server on a fresh
// PostgreSQL schema, runs the lines BENCH_ONLY names (all by default) one after another, prints each
// line's report, and ends with the lines' one-line summaries (so the last line compares run to run).
import type { Database } from '../src/db/client.js';
import type { Config } from '../src/config.js';
import type { createApp } from '../src/app.js';

export interface BenchEnv {
  db: Database;
  config: Config;
  app: ReturnType<typeof createApp>;
  /** The Funil server under test, e.g. http://127.0.0.1:41234 */
  serverUrl: string;
  /** PostgreSQL the bench runs on (without ?schema), and the schema the server uses there. */
  dbUrl: string;
  schema: string;
  /** autocannon connections and seconds per measured run (BENCH_CONNECTIONS, BENCH_DURATION). */
  connections: number;
  duration: number;
  /** Best of this many interleaved runs (BENCH_ROUNDS). */
  rounds: number;
  log: (s: string) => void;
  /** A new organisation with an Owner key, through the accounts service. */
  organisation: (name: string) => Promise<{ tenantId: string; key: string }>;
}

export interface BenchLineResult {
  /** Printed after all lines ran (a table, a paragraph). */
  report: string[];
  /** Printed at the very end, one line each. */
  summary?: string[];
}

export interface BenchLine {
  name: string;
  run: (env: BenchEnv) => Promise<BenchLineResult>;
}
