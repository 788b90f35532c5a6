// Vacuum for the embedded database. PGlite runs PostgreSQL in single-user mode, where autovacuum never
// runs (measured: a 2,000-row table updated 30 times still held 57,230 dead rows 75 s later, never
// vacuumed). Without it a table that churns grows for ever, because only VACUUM records freed space
// for reuse: 50 rounds of 1,000 jobs queued and finished left a 14 MB heap for an empty queue (0 bytes
// with a VACUUM every fifth round). The jobs table churns with every delivery, and the planner never
// gets statistics either. So, on PGlite only, a periodic run does what autovacuum would: each table past
// autovacuum's default thresholds gets VACUUM (ANALYZE) (dead rows over 50 + 20 % of the table) or
// ANALYZE (rows changed since the last analyse over 50 + 10 %), one statement per table. PGlite runs
// one statement at a time, so each is a pause for every request: a table is vacuumed only once it is
// worth it, as autovacuum would. PostgreSQL servers run their own autovacuum; this is never scheduled there.
import type { Database } from '../db/client.js';
import type { SqlRunner } from '../db/migrate.js';
import { log } from '../log.js';
import { definePeriodicQueue, startPeriodicRuns } from './periodic.js';
import type { QueueDeps } from './queue.js';

export const EMBEDDED_VACUUM_QUEUE = 'database.vacuum';
/** autovacuum_naptime's default. */
export const EMBEDDED_VACUUM_INTERVAL_MS = 60_000;

// The tables of this schema past autovacuum's default thresholds, most dead rows first; reltuples is
// -1 for a table never vacuumed nor analysed.
const DUE = `
  SELECT format('%I.%I', s.schemaname, s.relname) AS name, s.n_dead_tup > 50 + 0.2 * greatest(c.reltuples, 0) AS vacuum
  FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
  WHERE s.schemaname = current_schema()
    AND (s.n_dead_tup > 50 + 0.2 * greatest(c.reltuples, 0) OR s.n_mod_since_analyze > 50 + 0.1 * greatest(c.reltuples, 0))
  ORDER BY s.n_dead_tup DESC`;

export interface Vacuumed {
  table: string;
  statement: 'VACUUM (ANALYZE)' | 'ANALYZE';
}

/** Vacuums or analyses the tables that are due, one statement each (outside any transaction). */
export async function vacuumWhereDue(sql: SqlRunner): Promise<Vacuumed[]> {
  // The counters reach the statistics at most once a second; this makes the statement's end send them.
  await sql.query('SELECT pg_stat_force_next_flush()');
  const due = await sql.query<{ name: string; vacuum: boolean }>(DUE);
  const done: Vacuumed[] = [];
  for (const { name, vacuum } of due) {
    const statement = vacuum ? 'VACUUM (ANALYZE)' : 'ANALYZE';
    await sql.query(`${statement} ${name}`);
    done.push({ table: name, statement });
  }
  return done;
}

export const embeddedVacuumQueue = ({ db }: QueueDeps) =>
  definePeriodicQueue(db.prisma, EMBEDDED_VACUUM_QUEUE, EMBEDDED_VACUUM_INTERVAL_MS, async () => {
    const done = await vacuumWhereDue(db.sql);
    if (done.length) log.info('embedded database vacuum', { tables: done.map((d) => `${d.statement} ${d.table}`) });
  });

/** The start hook's part: on PGlite, makes sure the periodic vacuum is scheduled (its first run right away). */
export function startEmbeddedVacuum(db: Database): void {
  if (db.kind === 'pglite') void startPeriodicRuns(db.prisma, EMBEDDED_VACUUM_QUEUE, 'embedded database vacuum');
}
