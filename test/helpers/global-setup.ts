// Before the suite: on PGlite, migrate one database on disk, for every test file and server process to
// start from; on PostgreSQL, drop schemas left by runs that were killed before their own clean-up.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { PGlite } from '@electric-sql/pglite';
import { unaccent } from '@electric-sql/pglite/contrib/unaccent';
import { migrate } from '../../src/db/migrate.js';
import { testDatabaseKind, POSTGRES_URL } from './env.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string;
    pgliteDataDir: string;
  }
}

export default async function setup(project: TestProject) {
  const kind = testDatabaseKind();
  console.log(`[funil tests] database: ${kind}`);
  if (kind === 'pglite') {
    // One migrated database on disk: copied for server processes (helpers/database.ts, migratedDataDir)
    // and dumped for the in-memory ones of test files (openTestDatabase).
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `funil-pglite-template-${process.pid}-`));
    const lite = new PGlite(dataDir, { extensions: { unaccent } });
    await migrate({ script: async (s) => void (await lite.exec(s)), query: async (s, p) => (await lite.query(s, p)).rows as never[] });
    const dump = await lite.dumpDataDir('none');
    await lite.close();
    const file = `${dataDir}.tar`;
    fs.writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
    project.provide('pgliteTemplate', file);
    project.provide('pgliteDataDir', dataDir);
    return () => {
      fs.rmSync(file, { force: true });
      fs.rmSync(dataDir, { recursive: true, force: true });
    };
  }
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  // Only schemas older than two hours: a run going on in parallel keeps its own.
  const { rows } = await client.query(`SELECT nspname FROM pg_namespace WHERE nspname ~ '^funil_test_[0-9]+_'`);
  const cutoff = Date.now() / 1000 - 2 * 3600;
  for (const { nspname } of rows) {
    if (Number(nspname.split('_')[2]) < cutoff) await client.query(`DROP SCHEMA IF EXISTS "${nspname}" CASCADE`);
  }
  await client.end();
}
