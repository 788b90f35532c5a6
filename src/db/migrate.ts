// Applies prisma/migrations in-process at start, in order, each in its own transaction, recording them
// in Prisma's own _prisma_migrations table (so `prisma migrate status` agrees). One code path for
// PGlite and PostgreSQL; on PostgreSQL an advisory lock lets several instances start at once.
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

export async function migrate(db: SqlRunner, dir = MIGRATIONS_DIR): Promise<string[]> {
  const names = fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && fs.existsSync(path.join(dir, d.name, 'migration.sql')))
    .map((d) => d.name)
    .sort();
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
    const rows = await db.query<{ migration_name: string; checksum: string }>(
      'SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
    );
    const applied = new Map(rows.map((r) => [r.migration_name, r.checksum]));
    const done: string[] = [];
    for (const name of names) {
      const sql = fs.readFileSync(path.join(dir, name, 'migration.sql'), 'utf8');
      const checksum = createHash('sha256').update(sql).digest('hex');
      if (applied.has(name)) {
        if (applied.get(name) !== checksum) throw new Error(`Migration ${name} was edited after it was applied`);
        continue;
      }
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
