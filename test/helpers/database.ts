// The database a test file runs on: in-memory PGlite by default, or a fresh schema of the local
// PostgreSQL server when TEST_DATABASE=postgres.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/db/client.js';

export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export function testDatabaseKind(): 'pglite' | 'postgres' {
  return process.env.TEST_DATABASE === 'postgres' ? 'postgres' : 'pglite';
}

export async function openTestDatabase(): Promise<Database & { url?: string }> {
  if (testDatabaseKind() === 'pglite') return openDatabase({});
  const schema = `funil_test_${randomBytes(6).toString('hex')}`;
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
