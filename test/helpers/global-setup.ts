// Before the suite: print which database it runs on, and on PostgreSQL drop schemas left by runs that
// were killed before their own clean-up.
import pg from 'pg';
import { testDatabaseKind, POSTGRES_URL } from './database.js';

export default async function setup() {
  const kind = testDatabaseKind();
  console.log(`[funil tests] database: ${kind}`);
  if (kind !== 'postgres') return;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  const { rows } = await client.query(
    `SELECT nspname FROM pg_namespace WHERE nspname LIKE 'funil_test_%'`,
  );
  for (const { nspname } of rows) await client.query(`DROP SCHEMA IF EXISTS "${nspname}" CASCADE`);
  await client.end();
}
