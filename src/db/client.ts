// Opens the database: embedded PGlite under DATA_DIR by default (in a worker thread of its own, see
// pglite-remote.ts), PostgreSQL when DATABASE_URL is set. Migrations are applied (or, with `migrate: false`,
// required to be) before the Prisma client is handed out.
import fs from 'node:fs';
import path from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import type { SqlDriverAdapterFactory } from '@prisma/client/runtime/client';
import { PrismaClient } from '../generated/prisma/client.js';
import { migrate, requireMigrated, type SqlRunner } from './migrate.js';
import { lockDataDir } from './pglite-lock.js';
import { PGliteRemote } from './pglite-remote.js';
import { countingAdapterFactory } from './statements.js';
import { directSql, type DirectSql } from './direct.js';

export interface Database {
  kind: 'pglite' | 'postgres';
  prisma: PrismaClient;
  /** Raw access for migrations, benchmarks and tests. */
  sql: SqlRunner;
  /** The migrations this open applied (none when the database was up to date, or with `migrate: false`). */
  applied?: string[];
  /** PostgreSQL: the pool without Prisma, for the hottest statements (db/direct.ts). */
  direct?: DirectSql;
  /**
   * A statement's snapshot shows every commit of the data: PGlite, and a PostgreSQL server without
   * Citus (whose workers commit shards the coordinator's snapshot does not see). What the lists'
   * remembered totals rely on (db/snapshot-counts.ts); they are off without it.
   */
  oneSnapshot: boolean;
  /**
   * LISTEN on `channel`: `onNotify` runs for each notification (sent on commit of the transaction that
   * raised it) and after a lost PostgreSQL connection is re-established. Returns the unlisten function.
   */
  listen(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
  /** Connections of the pool for /metrics: PostgreSQL's pool; embedded, the calls to its thread. */
  poolStats?(): { size: number; inUse: number; waiting: number };
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** postgres:// URL; when absent, PGlite is used. A `schema` query parameter selects the search_path. */
  databaseUrl?: string;
  /** PGlite data directory; undefined means in memory (tests). */
  pgliteDir?: string;
  /** In-memory PGlite started from a dump of an already-migrated database (tests: skips initdb). */
  pgliteTemplate?: Blob;
  /**
   * PGlite in a worker thread of its own (default), so the database works on another core than HTTP;
   * false runs it on the main thread, as before (PGLITE_WORKER=false: a comparison in the bench).
   */
  pgliteWorker?: boolean;
  /** PostgreSQL: connections in the pool (default 10). The LISTEN connection comes on top. */
  poolSize?: number;
  /** PostgreSQL: statement_timeout of every connection but the migrator's, in ms; 0 = none (default 30 s). */
  statementTimeoutMs?: number;
  /**
   * Apply pending migrations (default). false (MIGRATE_ON_START=false): apply none, and fail with
   * MigrationsPendingError unless every migration is already applied (`npm run migrate` did it).
   */
  migrate?: boolean;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options) : openPGlite(options);
}

/** What the Database needs from an embedded PGlite, wherever it runs. */
interface Embedded {
  adapter: SqlDriverAdapterFactory;
  sql: SqlRunner;
  listen: Database['listen'];
  poolStats?: Database['poolStats'];
  close(): Promise<void>;
}

/** Applies pending migrations, or with `apply` false only checks there are none. */
async function migrateOrCheck(sql: SqlRunner, apply: boolean): Promise<string[]> {
  if (apply) return migrate(sql);
  await requireMigrated(sql);
  return [];
}

async function openPGlite({
  pgliteDir: dir,
  pgliteTemplate: template,
  pgliteWorker = true,
  migrate: apply = true,
}: DatabaseOptions): Promise<Database> {
  if (dir) fs.mkdirSync(path.dirname(dir), { recursive: true });
  // Before PGlite touches the files; a failed start releases it when the process exits.
  const lock = dir ? lockDataDir(dir) : undefined;
  const embedded = pgliteWorker ? await inWorker(dir, template) : await onMainThread(dir, template);
  // A failed migration (or check) ends the worker thread too (the lock goes when the process exits).
  const applied = await migrateOrCheck(embedded.sql, apply).catch(async (e) => {
    await embedded.close();
    throw e;
  });
  const prisma = new PrismaClient({ adapter: countingAdapterFactory(embedded.adapter, { traceStatements: true }) });
  return {
    kind: 'pglite',
    prisma,
    oneSnapshot: true,
    sql: embedded.sql,
    applied,
    listen: embedded.listen,
    poolStats: embedded.poolStats,
    async close() {
      await prisma.$disconnect();
      await embedded.close();
      lock?.release();
    },
  };
}

async function inWorker(dir?: string, template?: Blob): Promise<Embedded> {
  const remote = await PGliteRemote.start({ dir, template });
  return {
    adapter: remote.adapterFactory(),
    sql: remote.sql,
    listen: (channel, onNotify) => remote.listen(channel, onNotify),
    // One connection: the call the thread runs uses it, the others queue behind it.
    poolStats: () => ({ size: 1, inUse: Math.min(1, remote.callsUnderWay), waiting: Math.max(0, remote.callsUnderWay - 1) }),
    close: () => remote.close(),
  };
}

async function onMainThread(dir?: string, template?: Blob): Promise<Embedded> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { unaccent } = await import('@electric-sql/pglite/contrib/unaccent');
  const { PrismaPGlite } = await import('pglite-prisma-adapter');
  // Contrib extensions the migrations create (PostgreSQL servers ship them; PGlite loads them here).
  const extensions = { unaccent };
  const lite = dir ? new PGlite(dir, { extensions }) : new PGlite(template ? { loadDataDir: template, extensions } : { extensions });
  await lite.waitReady;
  return {
    // pglite-prisma-adapter ships its own copy of the adapter types; they match at run time.
    adapter: new PrismaPGlite(lite) as unknown as SqlDriverAdapterFactory,
    sql: {
      script: async (s) => void (await lite.exec(s)),
      query: async (s, params) => (await lite.query(s, params)).rows as never[],
    },
    listen: (channel, onNotify) => lite.listen(channel, () => onNotify()),
    close: () => lite.close(),
  };
}

/** How long a statement waits for a free pooled connection (the pool is DATABASE_POOL_SIZE). */
const POOL_WAIT_MS = 10_000;

async function openPostgres(
  url: string,
  { poolSize = 10, statementTimeoutMs = 30_000, migrate: apply = true }: DatabaseOptions,
): Promise<Database> {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema') ?? undefined;
  parsed.searchParams.delete('schema');
  const connectionString = parsed.toString();
  // Unqualified names in migrations and raw queries resolve in the chosen schema.
  const searchPath = schema ? `-c search_path="${schema}"` : '';
  const options = `${searchPath} -c statement_timeout=${statementTimeoutMs}`.trim();
  // A request that finds no free connection within POOL_WAIT_MS fails (503, errors.ts) instead of queueing forever.
  const pool = new pg.Pool({ connectionString, max: poolSize, options, connectionTimeoutMillis: POOL_WAIT_MS });
  if (schema) {
    // IF NOT EXISTS is no guard against another process creating it at the same moment.
    await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema.replace(/"/g, '')}"`).catch((e) => {
      if ((e as { code?: string }).code !== '23505') throw e;
    });
  }
  const sql: SqlRunner = {
    script: async (s) => void (await pool.query(s)),
    query: async <T>(s: string, params?: unknown[]) => (await pool.query(s, params)).rows as T[],
  };
  // Migrations hold an advisory lock for their whole run, so they need one connection of their own, and
  // no statement timeout: waiting for another process's migrations, or a long one, is not a fault.
  const migrator = new pg.Client({ connectionString, options: searchPath || undefined });
  await migrator.connect();
  let applied: string[];
  try {
    applied = await migrateOrCheck(
      {
        script: async (s) => void (await migrator.query(s)),
        query: async <T>(s: string, params?: unknown[]) => (await migrator.query(s, params)).rows as T[],
      },
      apply,
    );
  } catch (e) {
    await pool.end(); // so that a refused start (MIGRATE_ON_START=false) can exit
    throw e;
  } finally {
    await migrator.end();
  }
  const prisma = new PrismaClient({ adapter: countingAdapterFactory(new PrismaPg(pool, { schema })) });
  const [{ citus }] = await sql.query<{ citus: boolean }>(`SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS citus`);
  return {
    kind: 'postgres',
    prisma,
    oneSnapshot: !citus,
    sql,
    applied,
    direct: directSql(pool),
    poolStats: () => ({ size: poolSize, inUse: pool.totalCount - pool.idleCount, waiting: pool.waitingCount }),
    listen: (channel, onNotify) => listenPostgres({ connectionString, options }, channel, onNotify),
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
async function listenPostgres(connection: pg.ClientConfig, channel: string, onNotify: () => void) {
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
    const c = new pg.Client(connection);
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
