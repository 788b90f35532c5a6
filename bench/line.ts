// What every line of `npm run bench` gets and gives. bench/run.ts sets up one server on a fresh
// PostgreSQL schema, runs the lines BENCH_ONLY names (all by default) one after another, prints each
// line's report, and ends with the lines' one-line summaries and, last, the `messaging ratios:` line
// (issue 25) built from the named ratios the lines report.
//
// Reporting a ratio: return it under its name in `ratios`, e.g. the webhooks line's
//     return { report, ratios: { 'webhooks/raw': funil.eventsPerSecond / raw.eventsPerSecond } };
// Names are fixed (SUMMARY_RATIOS, in the order printed); one not reported prints `–` (a line not run,
// or a baseline not built yet). A new name: add it to SUMMARY_RATIOS and RatioName.
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
  /** Printed after everything else, the ratios line included (the subscribers line). */
  last?: string[];
  /** Named ratios for the last line of the run (`messaging ratios: …`), Funil ÷ baseline (PGlite: p50 ÷ PostgreSQL's p50). */
  ratios?: Partial<Record<RatioName, number>>;
}

/** The `messaging ratios:` line's entries, in order: a name alone, or a name with its parts (`uploads/node 1MB=… 10MB=…`). */
export const SUMMARY_RATIOS: readonly { name: string; parts?: readonly string[] }[] = [
  { name: 'conversations/raw', parts: ['20', '100'] },
  { name: 'inbound/raw' },
  { name: 'webhooks/raw' },
  { name: 'uploads/node', parts: ['1MB', '10MB'] },
  { name: 'proxy/node' },
  { name: 'kanban/PostGraphile' },
  { name: 'pglite p50/PG' },
];

/** A ratio's name: an entry of SUMMARY_RATIOS, with its part after a space when it has parts. */
export type RatioName =
  | 'conversations/raw 20'
  | 'conversations/raw 100'
  | 'inbound/raw'
  | 'webhooks/raw'
  | 'uploads/node 1MB'
  | 'uploads/node 10MB'
  | 'proxy/node'
  | 'kanban/PostGraphile'
  | 'pglite p50/PG';

/** `messaging ratios: conversations/raw 20=0.95 100=0.91; inbound/raw –; …` from the ratios the lines reported. */
export function ratiosLine(ratios: Partial<Record<string, number>>): string {
  const value = (name: string) => {
    const v = ratios[name];
    return v == null || !Number.isFinite(v) ? '–' : v.toFixed(2);
  };
  const entries = SUMMARY_RATIOS.map(({ name, parts }) =>
    parts ? `${name} ${parts.map((part) => `${part}=${value(`${name} ${part}`)}`).join(' ')}` : `${name} ${value(name)}`,
  );
  return `messaging ratios: ${entries.join('; ')}`;
}

export interface BenchLine {
  name: string;
  run: (env: BenchEnv) => Promise<BenchLineResult>;
}
