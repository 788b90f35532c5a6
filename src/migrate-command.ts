// `npm run migrate`: applies the pending migrations to the configured database and exits: 0 when the
// database is up to date (whether this run applied anything or not), 1 with the reason otherwise. A
// deploy runs it once before starting the new processes (with MIGRATE_ON_START=false, say); several
// runs at once on PostgreSQL wait for each other under the migration lock and apply each migration once.
import path from 'node:path';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './db/client.js';
import { MIGRATIONS_DIR } from './db/migrate.js';
import { DataDirInUseError } from './db/pglite-lock.js';
import { setLogLevel } from './log.js';

async function main() {
  const config = loadConfig();
  setLogLevel('warn');
  const where = config.databaseUrl ? 'PostgreSQL' : `the embedded database in ${config.dataDir}`;
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    pgliteDir: path.join(config.dataDir, 'db'),
    pgliteWorker: config.pgliteWorker,
  });
  try {
    const [{ count }] = await db.sql.query<{ count: number }>(
      'SELECT count(*)::int AS count FROM "_prisma_migrations" WHERE finished_at IS NOT NULL',
    );
    const applied = db.applied ?? [];
    if (applied.length)
      console.log(
        `Applied ${applied.length} migration(s) to ${where}:\n  ${applied.join('\n  ')}\n${count} migrations applied in all; the database is up to date.`,
      );
    else
      console.log(
        `Nothing to apply: ${where} is up to date (${count} migrations applied, from ${path.relative(process.cwd(), MIGRATIONS_DIR)}).`,
      );
  } finally {
    await db.close();
  }
}

main().catch((e) => {
  if (e instanceof ConfigError || e instanceof DataDirInUseError) console.error(e.message);
  else {
    const message = e instanceof Error ? e.message : String(e);
    // A failed migration is rolled back whole; the ones before it stay applied.
    if (/^Migration \S+ failed/.test(message))
      console.error(`${message}\nThe migrations before it are applied; fix the cause and run \`npm run migrate\` again.`);
    else console.error(`Could not migrate: ${message}`);
  }
  process.exit(1);
});
