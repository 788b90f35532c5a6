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
import { lockDataDir } from './pglite-lock.js';
import { countingAdapterFactory } from './statements.js';

export interface Database {
  kind: 'pglite' | 'postgres';
  prisma: PrismaClient;
  /** Raw access for migrations, benchmarks and tests. */
  sql: SqlRunner;
  /**
   * LISTEN on `channel`: `onNotify` runs for each notification (sent on commit of the transaction that
   * raised it) and after a lost PostgreSQL connection is re-established. Returns the unlisten function.
   */
  listen(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
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
  // Before PGlite touches the files; a failed start releases it when the process exits.
  const lock = dir ? lockDataDir(dir) : undefined;
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
    listen: (channel, onNotify) => lite.listen(channel, () => onNotify()),
    async close() {
      await prisma.$disconnect();
      await lite.close();
      lock?.release();
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
    listen: (channel, onNotify) => listenPostgres(parsed.toString(), channel, onNotify),
    async close() {
      await prisma.$disconnect();
      await pool.end();
    },
  };
}

/**
 * A dedicated connection outside the pool holds the LISTEN (it must stay open). When it drops, it is
 * reopened every second until it works; `onNotify` then runs once, for notifications missed meanwhile.
 */
async function listenPostgres(connectionString: string, channel: string, onNotify: () => void) {
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  const reopen = () => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      open().then(onNotify, reopen);
    }, 1000).unref();
  };
  const open = async () => {
    const c = new pg.Client({ connectionString });
    c.on('notification', (n) => n.channel === channel && onNotify());
    const lost = () => client === c && reopen();
    c.on('error', lost);
    c.on('end', lost);
    client = c;
    await c.connect();
    await c.query(`LISTEN "${channel.replace(/"/g, '')}"`);
  };
  await open();
  return async () => {
    closed = true;
    clearTimeout(retry);
    await client?.end();
  };
}
