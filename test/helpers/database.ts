// The database a test file runs on: in-memory PGlite by default, or a fresh schema of the local
// PostgreSQL server when TEST_DATABASE=postgres. PGlite files start from a dump of a migrated database
// made once per run (global-setup.ts), which skips initdb in every file.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.js';

import { POSTGRES_URL, testDatabaseKind } from './env.js';

export { POSTGRES_URL, testDatabaseKind };

/**
 * A new DATA_DIR (under the system's temporary directory, named from `prefix`) whose PGlite database is
 * already migrated: a copy of global-setup.ts's, so a server process started on it skips initdb and the
 * migrations (7.5 s on an idle machine, 1.3 s from the copy). Empty when the suite runs on PostgreSQL.
 * A test of a first start on an empty directory (npm-start, migrate) makes its own.
 */
export function migratedDataDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const template = testDatabaseKind() === 'pglite' ? inject('pgliteDataDir') : undefined;
  if (template && fs.existsSync(template)) fs.cpSync(template, path.join(dir, 'db'), { recursive: true });
  return dir;
}

/**
 * A database for server processes (`DATABASE_URL` on a fresh PostgreSQL schema, or a migrated PGlite
 * `DATA_DIR`), as their environment; `cleanup` gets what drops it after the file.
 */
export function serverDatabase(prefix: string, cleanup: Array<() => Promise<void>>): Record<string, string> {
  if (testDatabaseKind() === 'postgres') {
    const schema = `funil_test_${prefix}_${randomBytes(4).toString('hex')}`;
    cleanup.push(async () => {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    });
    return { DATABASE_URL: `${POSTGRES_URL}?schema=${schema}` };
  }
  const dir = migratedDataDir(`funil-${prefix}-`);
  cleanup.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  return { DATA_DIR: dir };
}

export async function openTestDatabase(): Promise<Database & { url?: string }> {
  if (testDatabaseKind() === 'pglite') {
    const file = inject('pgliteTemplate');
    const template = file && fs.existsSync(file) ? new Blob([fs.readFileSync(file)]) : undefined;
    return openDatabase({ pgliteTemplate: template });
  }
  // The creation time in the name lets a later run tell abandoned schemas from ones in use.
  const schema = `funil_test_${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
  const url = `${POSTGRES_URL}?schema=${schema}`;
  const db = await openDatabase({ databaseUrl: url, poolSize: 20 });
  return {
    ...db,
    url,
    async close() {
      await db.close();
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    },
  };
}
