// Applies prisma/migrations in-process, in order, each in its own transaction, recording them in Prisma's
// own _prisma_migrations table (so `prisma migrate status` agrees). One code path for PGlite and
// PostgreSQL; on PostgreSQL an advisory lock lets several processes (`npm run migrate`, or starts with
// MIGRATE_ON_START) run at once: one applies, the others wait and find nothing left to do.
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../prisma/migrations', import.meta.url));

/** The minimum a database needs to offer for migrations: run a script, run a parameterised query. */
export interface SqlRunner {
  script(sql: string): Promise<void>;
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
}

/** Arbitrary, constant: "funil migrations". The first start's bootstrap decides under it too. */
export const MIGRATION_LOCK_KEY = 72_110_001;

/** A start with MIGRATE_ON_START=false found migrations still to apply. */
export class MigrationsPendingError extends Error {}

interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

function readMigrations(dir: string): Migration[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && fs.existsSync(path.join(dir, d.name, 'migration.sql')))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = fs.readFileSync(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

/** Applied migrations by name → checksum; empty when the table is not there yet. */
async function appliedChecksums(db: SqlRunner): Promise<Map<string, string>> {
  const [{ present }] = await db.query<{ present: boolean }>(`SELECT to_regclass('"_prisma_migrations"') IS NOT NULL AS present`);
  if (!present) return new Map();
  const rows = await db.query<{ migration_name: string; checksum: string }>(
    'SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
  );
  return new Map(rows.map((r) => [r.migration_name, r.checksum]));
}

/** The migrations not applied yet, in order; an applied one that was edited since is an error. */
function pending(all: Migration[], applied: Map<string, string>): Migration[] {
  for (const m of all) {
    if (applied.has(m.name) && applied.get(m.name) !== m.checksum) throw new Error(`Migration ${m.name} was edited after it was applied`);
  }
  return all.filter((m) => !applied.has(m.name));
}

/**
 * For a start with MIGRATE_ON_START=false: fails, saying what to run, unless every migration is applied.
 * Reads only; takes no lock.
 */
export async function requireMigrated(db: SqlRunner, dir = MIGRATIONS_DIR): Promise<void> {
  const all = readMigrations(dir);
  const todo = pending(all, await appliedChecksums(db));
  if (todo.length === 0) return;
  const state =
    todo.length === all.length
      ? 'is empty (no migration applied)'
      : `is older than this version (${todo.length} of ${all.length} migrations not applied, from ${todo[0].name})`;
  throw new MigrationsPendingError(
    `The database ${state} and MIGRATE_ON_START=false: run \`npm run migrate\` first, then start again ` +
      `(or leave MIGRATE_ON_START unset, and the start applies them).`,
  );
}

/** Applies what is pending and returns the names applied (none when another process did it first). */
export async function migrate(db: SqlRunner, dir = MIGRATIONS_DIR): Promise<string[]> {
  const all = readMigrations(dir);
  await db.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
  try {
    await db.script(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id" VARCHAR(36) PRIMARY KEY NOT NULL,
      "checksum" VARCHAR(64) NOT NULL,
      "finished_at" TIMESTAMPTZ,
      "migration_name" VARCHAR(255) NOT NULL,
      "logs" TEXT,
      "rolled_back_at" TIMESTAMPTZ,
      "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
      "applied_steps_count" INTEGER NOT NULL DEFAULT 0)`);
    const done: string[] = [];
    for (const { name, sql, checksum } of pending(all, await appliedChecksums(db))) {
      await db.script(`BEGIN;\n${sql}\n;COMMIT;`).catch(async (e) => {
        await db.script('ROLLBACK').catch(() => {});
        throw new Error(`Migration ${name} failed: ${(e as Error).message}`);
      });
      await db.query(
        'INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count) VALUES ($1, $2, now(), $3, 1)',
        [randomUUID(), checksum, name],
      );
      done.push(name);
    }
    return done;
  } finally {
    await db.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
  }
}
