// Before the suite: on PGlite, migrate one database and dump it for every test file to start from; on
// PostgreSQL, drop schemas left by runs that were killed before their own clean-up.
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
  }
}

export default async function setup(project: TestProject) {
  const kind = testDatabaseKind();
  console.log(`[funil tests] database: ${kind}`);
  if (kind === 'pglite') {
    const lite = new PGlite({ extensions: { unaccent } });
    await migrate({ script: async (s) => void (await lite.exec(s)), query: async (s, p) => (await lite.query(s, p)).rows as never[] });
    const dump = await lite.dumpDataDir('none');
    await lite.close();
    const file = path.join(os.tmpdir(), `funil-pglite-template-${process.pid}.tar`);
    fs.writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
    project.provide('pgliteTemplate', file);
    return () => fs.rmSync(file, { force: true });
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
