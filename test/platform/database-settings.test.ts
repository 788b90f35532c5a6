// The settings that size a process's share of PostgreSQL: DATABASE_POOL_SIZE connections plus one for
// LISTEN, a statement timeout on all of them but the migrator's, and the stop settings' validation.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { MIGRATION_LOCK_KEY } from '../../src/db/migrate.js';
import { POSTGRES_URL, testDatabaseKind } from '../helpers/env.js';

const schemas: string[] = [];
afterAll(async () => {
  if (!schemas.length) return;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  for (const s of schemas) await client.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  await client.end();
});

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e.message;
    throw e;
  }
  return '';
}

describe('settings', () => {
  it('defaults: a pool of 10, statements cut after 30 s, 25 s to stop, no delay before refusing connections', () => {
    expect(loadConfig({})).toMatchObject({
      databasePoolSize: 10,
      databaseStatementTimeoutMs: 30_000,
      shutdownTimeoutMs: 25_000,
      shutdownDelayMs: 0,
    });
    expect(
      loadConfig({ DATABASE_POOL_SIZE: '3', DATABASE_STATEMENT_TIMEOUT_MS: '0', SHUTDOWN_TIMEOUT_MS: '5000', SHUTDOWN_DELAY_MS: '1000' }),
    ).toMatchObject({
      databasePoolSize: 3,
      databaseStatementTimeoutMs: 0,
      shutdownTimeoutMs: 5_000,
      shutdownDelayMs: 1_000,
    });
  });

  it('refuses values that cannot work, naming them', () => {
    const message = configError({
      DATABASE_POOL_SIZE: '0',
      DATABASE_STATEMENT_TIMEOUT_MS: '-1',
      SHUTDOWN_TIMEOUT_MS: 'soon',
      SHUTDOWN_DELAY_MS: '2.5',
    });
    expect(message).toMatch(/DATABASE_POOL_SIZE must be a whole number >= 1, got "0"/);
    expect(message).toMatch(/DATABASE_STATEMENT_TIMEOUT_MS must be a whole number >= 0, got "-1"/);
    expect(message).toMatch(/SHUTDOWN_TIMEOUT_MS must be a whole number >= 1, got "soon"/);
    expect(message).toMatch(/SHUTDOWN_DELAY_MS must be a whole number >= 0, got "2.5"/);
    expect(configError({ SHUTDOWN_TIMEOUT_MS: '1000', SHUTDOWN_DELAY_MS: '1000' })).toMatch(
      /SHUTDOWN_DELAY_MS must be shorter than SHUTDOWN_TIMEOUT_MS/,
    );
  });
});

describe.skipIf(testDatabaseKind() !== 'postgres')('PostgreSQL connections (PostgreSQL only: PGlite has none)', () => {
  it('holds at most the pool plus one LISTEN connection; statements are cut after the timeout; migrations wait past it', async () => {
    const schema = `funil_test_${Math.floor(Date.now() / 1000)}_set${randomBytes(3).toString('hex')}`;
    schemas.push(schema);
    const name = `funil-settings-${randomBytes(3).toString('hex')}`;
    const observer = new pg.Client({ connectionString: POSTGRES_URL });
    await observer.connect();
    const connections = async () =>
      Number((await observer.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1`, [name])).rows[0].n);
    try {
      // Another process migrating: the start waits for it longer than the statement timeout, and works.
      await observer.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      const opening = openDatabase({
        databaseUrl: `${POSTGRES_URL}?schema=${schema}&application_name=${name}`,
        poolSize: 3,
        statementTimeoutMs: 300,
      });
      await new Promise((r) => setTimeout(r, 1_000));
      await observer.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
      const db = await opening;
      try {
        const stopListening = await db.listen('funil_settings_test', () => {});
        const pids = await Promise.all(
          Array.from({ length: 10 }, () =>
            db.sql.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, pg_sleep(0.1)').then((r) => r[0].pid),
          ),
        );
        expect(new Set(pids).size).toBe(3);
        expect(await connections()).toBe(4); // the migrator's connection is closed
        // Every statement is cut after the timeout, through Prisma as through raw SQL.
        await expect(db.sql.query('SELECT pg_sleep(1)')).rejects.toMatchObject({ code: '57014' });
        await expect(db.prisma.$queryRaw`SELECT pg_sleep(1)::text`).rejects.toThrow(/statement timeout/);
        // The one connection besides the pool.
        const listener = await observer.query(`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'`, [
          name,
        ]);
        expect(listener.rows).toHaveLength(1);
        await stopListening();
      } finally {
        await db.close();
      }
    } finally {
      await observer.query('SELECT pg_advisory_unlock_all()');
      await observer.end();
    }
  });
});
