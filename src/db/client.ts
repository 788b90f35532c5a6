// Opens the database: embedded PGlite under DATA_DIR by default, PostgreSQL when DATABASE_URL is set.
// Migrations are applied before the Prisma client is handed out.
import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { unaccent } from '@electric-sql/pglite/contrib/unaccent';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../generated/prisma/client.js';
import { migrate, type SqlRunner } from './migrate.js';
import { countingAdapterFactory } from './statements.js';

export interface Database {
  kind: 'pglite' | 'postgres';
  prisma: PrismaClient;
  /** Raw access for migrations, benchmarks and tests. */
  sql: SqlRunner;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** postgres:// URL; when absent, PGlite is used. A `schema` query parameter selects the search_path. */
  databaseUrl?: string;
  /** PGlite data directory; undefined means in memory (tests). */
  pgliteDir?: string;
  /** In-memory PGlite started from a dump of an already-migrated database (tests: skips initdb). */
  pgliteTemplate?: Blob;
  poolSize?: number;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options.poolSize) : openPGlite(options.pgliteDir, options.pgliteTemplate);
}

async function openPGlite(dir?: string, template?: Blob): Promise<Database> {
  if (dir) fs.mkdirSync(path.dirname(dir), { recursive: true });
  // Contrib extensions the migrations create (PostgreSQL servers ship them; PGlite loads them here).
  const extensions = { unaccent };
  const lite = dir ? new PGlite(dir, { extensions }) : new PGlite(template ? { loadDataDir: template, extensions } : { extensions });
  await lite.waitReady;
  const sql: SqlRunner = {
    script: async (s) => void (await lite.exec(s)),
    query: async (s, params) => (await lite.query(s, params)).rows as never[],
  };
  await migrate(sql);
  const prisma = new PrismaClient({ adapter: countingAdapterFactory(new PrismaPGlite(lite) as unknown as PrismaPg) });
  return {
    kind: 'pglite',
    prisma,
    sql,
    async close() {
      await prisma.$disconnect();
      await lite.close();
    },
  };
}

async function openPostgres(url: string, poolSize = 10): Promise<Database> {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema') ?? undefined;
  parsed.searchParams.delete('schema');
  const pool = new pg.Pool({
    connectionString: parsed.toString(),
    max: poolSize,
    // Unqualified names in migrations and raw queries resolve in the chosen schema.
    options: schema ? `-c search_path="${schema}"` : undefined,
  });
  if (schema) await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema.replace(/"/g, '')}"`);
  const sql: SqlRunner = {
    script: async (s) => void (await pool.query(s)),
    query: async (s, params) => (await pool.query(s, params as unknown[])).rows,
  };
  // Migrations hold an advisory lock for their whole run, so they need one connection, not the pool.
  const client = await pool.connect();
  try {
    await migrate({
      script: async (s) => void (await client.query(s)),
      query: async (s, params) => (await client.query(s, params as unknown[])).rows,
    });
  } finally {
    client.release();
  }
  const prisma = new PrismaClient({ adapter: countingAdapterFactory(new PrismaPg(pool, { schema })) });
  return {
    kind: 'postgres',
    prisma,
    sql,
    async close() {
      await prisma.$disconnect();
      await pool.end();
    },
  };
}
