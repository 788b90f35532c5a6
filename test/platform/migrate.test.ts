// `npm run migrate` applies the migrations and exits; a start with MIGRATE_ON_START=false then serves
// without migrating, and refuses, saying what to run, a database that is empty or older than the code.
// Several migrate runs at once on one PostgreSQL schema apply each migration once.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR, MigrationsPendingError, requireMigrated } from '../../src/db/migrate.js';
import { openTestDatabase, POSTGRES_URL, testDatabaseKind } from '../helpers/database.js';
import { spawnServer } from '../helpers/server-process.js';
import { generateApiKey } from '../../src/auth/keys.js';

const run = promisify(execFile);
const postgres = testDatabaseKind() === 'postgres';
const schemas: string[] = [];
const migrationNames = fs.readdirSync(MIGRATIONS_DIR).filter((n) => fs.existsSync(path.join(MIGRATIONS_DIR, n, 'migration.sql')));

/** A new empty database: a schema on PostgreSQL, a data directory on PGlite. */
function freshDatabase(): Record<string, string> {
  if (!postgres) return { DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'funil-migrate-')) };
  const schema = `funil_test_${Math.floor(Date.now() / 1000)}_mig${randomBytes(3).toString('hex')}`;
  schemas.push(schema);
  return { DATABASE_URL: `${POSTGRES_URL}?schema=${schema}` };
}

/** `npm run migrate`'s process; resolves with its exit code and output whatever the code. */
async function npmRunMigrate(env: Record<string, string>) {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/migrate-command.ts'], {
      env: { ...process.env, ...env },
    });
    return { code: 0, out: stdout + stderr };
  } catch (e) {
    const failed = e as { code: number; stdout: string; stderr: string };
    return { code: failed.code, out: failed.stdout + failed.stderr };
  }
}

async function sqlIn(env: Record<string, string>, text: string) {
  const schema = new URL(env.DATABASE_URL).searchParams.get('schema');
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`SET search_path TO "${schema}"`);
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

afterAll(async () => {
  if (!schemas.length) return;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
});

describe('npm run migrate and MIGRATE_ON_START', () => {
  it('migrates and exits 0; a start with MIGRATE_ON_START=false then serves', { timeout: 180_000 }, async () => {
    const db = freshDatabase();
    const first = await npmRunMigrate(db);
    expect(first, first.out).toMatchObject({ code: 0 });
    expect(first.out).toContain(`Applied ${migrationNames.length} migration(s)`);
    const again = await npmRunMigrate(db);
    expect(again.code, again.out).toBe(0);
    expect(again.out).toContain(`Nothing to apply`);

    const key = generateApiKey();
    const server = await spawnServer({ ...db, MIGRATE_ON_START: 'false', BOOTSTRAP_API_KEY: key });
    await server.listening;
    expect(server.output()).not.toContain('applying pending migrations');
    const ready = await fetch(`http://127.0.0.1:${server.port}/ready`);
    expect(ready.status).toBe(200);
    // The first start still creates the first organisation: the key works.
    const tags = await fetch(`http://127.0.0.1:${server.port}/backend/tags`, { headers: { authorization: `Bearer ${key}` } });
    expect(tags.status).toBe(200);
    server.proc.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });

  it('a start with MIGRATE_ON_START=false on an empty database exits 1 telling to run npm run migrate', { timeout: 120_000 }, async () => {
    const db = freshDatabase();
    const server = await spawnServer({ ...db, MIGRATE_ON_START: 'false' });
    await expect(server.listening).rejects.toThrow();
    expect(await server.exited).toBe(1);
    expect(server.output()).toContain(
      'The database is empty (no migration applied) and MIGRATE_ON_START=false: run `npm run migrate` first',
    );
    if (postgres) expect(await sqlIn(db, `SELECT to_regclass('_prisma_migrations') AS t`)).toEqual([{ t: null }]); // nothing was created
  });

  it('refuses a database older than the code, and one whose applied migration was edited', async () => {
    const db = await openTestDatabase();
    try {
      await expect(requireMigrated(db.sql)).resolves.toBeUndefined();
      // The same migrations plus one this database has not seen: what a start of a newer version finds.
      const newer = fs.mkdtempSync(path.join(os.tmpdir(), 'funil-migrations-'));
      fs.cpSync(MIGRATIONS_DIR, newer, { recursive: true });
      fs.mkdirSync(path.join(newer, '29991231000000_next'));
      fs.writeFileSync(path.join(newer, '29991231000000_next', 'migration.sql'), 'CREATE TABLE next_one (id int);');
      const older = await requireMigrated(db.sql, newer).catch((e) => e);
      expect(older).toBeInstanceOf(MigrationsPendingError);
      expect(older.message).toBe(
        `The database is older than this version (1 of ${migrationNames.length + 1} migrations not applied, from 29991231000000_next) and ` +
          'MIGRATE_ON_START=false: run `npm run migrate` first, then start again (or leave MIGRATE_ON_START unset, and the start applies them).',
      );
      fs.appendFileSync(path.join(newer, migrationNames[0], 'migration.sql'), '\n-- edited\n');
      await expect(requireMigrated(db.sql, newer)).rejects.toThrow(`Migration ${migrationNames[0]} was edited after it was applied`);
      fs.rmSync(newer, { recursive: true });
    } finally {
      await db.close();
    }
  });

  it.runIf(postgres)(
    'two migrate runs at once on one fresh schema both succeed and apply each migration once',
    { timeout: 180_000 },
    async () => {
      const db = freshDatabase();
      const runs = await Promise.all([npmRunMigrate(db), npmRunMigrate(db)]);
      for (const r of runs) expect(r.code, r.out).toBe(0);
      // One applied them all, the other waited for the lock and found nothing to do.
      expect(runs.map((r) => /^Applied (\d+)/m.exec(r.out)?.[1] ?? 'none').sort()).toEqual([String(migrationNames.length), 'none']);
      const rows = await sqlIn(db, 'SELECT migration_name FROM "_prisma_migrations" ORDER BY migration_name');
      expect(rows.map((r) => r.migration_name)).toEqual([...migrationNames].sort());
    },
  );
});
