// Change sync on the lists (decisions.md "What integrations rely on"): `updated_since` and an opaque
// `cursor` page through rows by (updated_at, id) ascending, so a client sees every change while rows are
// written. Rules:
// - The database writes updated_at, at the moment of the write (a trigger, clock_timestamp(); migration
//   20261125164700_sync_updated_at): every row an open transaction writes carries a time no earlier than
//   that transaction's start.
// - A sync page only holds rows written before its horizon: the start of the oldest open transaction of
//   the database's client sessions, or the start of the horizon statement when none is open. Any row that
//   commits later carries a later time, so it comes after every cursor already given out, never behind one.
//   The horizon is read in its own statement, before the rows (a statement that read both would take its
//   snapshot first, and could miss a transaction that commits in between). PGlite runs one transaction at
//   a time, so there its horizon is the statement's start.
// - The cursor names its list and organisation; the rows are read through the organisation's scoped client
//   anyway, so a cursor can position a page but never widen it.
import { createHash } from 'node:crypto';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { builder } from '../../schema/builder.js';
import { invalidParameter } from '../../errors.js';
import type { Context } from '../../context/context.js';
import { setNextCursor } from '../../context/next-cursor.js';

/** Lists that sync; a cursor is valid on its own list only. */
export type SyncList = 'leads' | 'deals' | 'conversations' | 'tags' | 'products' | 'knowledge_items' | 'templates';

export interface SyncArgs {
  updated_since?: string | null;
  cursor?: string | null;
}

export interface SyncArrayArgs extends SyncArgs {
  limit?: number | null;
}

type ArgBuilder = Parameters<Parameters<typeof builder.args>[0]>[0];
const syncArgStrings = (t: ArgBuilder) => ({
  updated_since: t.string({
    description: 'Sync: only rows changed after this time (RFC 3339, e.g. 2026-11-25T10:00:00.000Z); orders by updated_at, id ascending.',
  }),
  cursor: t.string({ description: 'Sync: the page after this cursor (a previous sync page’s); orders by updated_at, id ascending.' }),
});

export const syncArgs = builder.args(syncArgStrings);

/** The arguments of a list answered whole (a plain array): the sync ones and the sync page's size. */
export const syncArrayArgs = builder.args((t) => ({
  ...syncArgStrings(t),
  limit: t.int({
    description:
      'Sync page size: 1 to 100, default 100 (out of range: 100). Only with `updated_since` or `cursor`; the next page’s cursor is the X-Next-Cursor header.',
  }),
}));

/** A Prisma selection that also reads what a cursor is made of. */
export function withSyncKeys<Q extends Record<string, unknown>>(query: Q): Q {
  const select = query.select as Record<string, unknown> | undefined;
  return select ? { ...query, select: { ...select, id: true, updated_at: true } } : query;
}

/** A position in a sync: the last row a page gave. */
interface Position {
  at: Date;
  id: string;
}

export interface SyncWindow {
  list: SyncList;
  tenantId: string;
  /** Rows changed after this time (`updated_since`), as a bound on updated_at. */
  since: { gt: Date } | { gte: Date } | null;
  after: Position | null;
  /** Rows written before this time only (see above). */
  horizon: Date;
  limit: number;
}

/** The sync window of a list call, or null when it asks for neither `updated_since` nor `cursor`. */
export async function openSync(ctx: Context, list: SyncList, args: SyncArgs, limit: number): Promise<SyncWindow | null> {
  if (!isSync(args)) return null;
  const tenantId = tenantOf(ctx);
  const since = args.updated_since == null ? null : parseSince(args.updated_since);
  const after = args.cursor == null ? null : decodeCursor(args.cursor, list, tenantId);
  return { list, tenantId, since, after, horizon: await syncHorizon(ctx.prisma), limit };
}

/** The Prisma condition of a sync window (every synced model has updated_at and id). */
export function syncWhere(w: SyncWindow) {
  const conditions: object[] = [{ updated_at: { lt: w.horizon } }];
  if (w.since) conditions.push({ updated_at: w.since });
  if (w.after) conditions.push({ OR: [{ updated_at: { gt: w.after.at } }, { updated_at: w.after.at, id: { gt: w.after.id } }] });
  return { AND: conditions };
}

/** The same condition in SQL, on the rows of `alias` (raw statements: the deals list). */
export function syncSql(w: SyncWindow, alias: string): Prisma.Sql {
  const at = Prisma.raw(`${alias}.updated_at`);
  const id = Prisma.raw(`${alias}.id`);
  const time = (d: Date) => Prisma.sql`${d.toISOString()}::timestamptz`;
  const parts = [Prisma.sql`${at} < ${time(w.horizon)}`];
  if (w.since) parts.push('gt' in w.since ? Prisma.sql`${at} > ${time(w.since.gt)}` : Prisma.sql`${at} >= ${time(w.since.gte)}`);
  if (w.after) parts.push(Prisma.sql`(${at}, ${id}) > (${time(w.after.at)}, ${w.after.id}::uuid)`);
  return Prisma.join(parts, ' AND ');
}

/** Whether a list call asks for a sync page. */
export const isSync = (args: SyncArgs) => args.updated_since != null || args.cursor != null;

export const SYNC_ORDER = [{ updated_at: 'asc' as const }, { id: 'asc' as const }];

/** Rows to read for a page: one more than the page, to know whether another follows. */
export const syncTake = (w: SyncWindow) => w.limit + 1;

/** The page of rows read with `syncTake`, and the cursor of the next page (null on the last one). */
export function syncPage<T extends { updated_at: Date; id: string }>(w: SyncWindow, rows: T[]): { rows: T[]; next: string | null } {
  if (rows.length <= w.limit) return { rows, next: null };
  const page = rows.slice(0, w.limit);
  const last = page[page.length - 1];
  return { rows: page, next: encodeCursor(w.list, w.tenantId, { at: last.updated_at, id: last.id }) };
}

/** The cursor of the page that ends with this row (raw statements that find the row themselves). */
export const cursorAfter = (w: SyncWindow, row: { updated_at: Date; id: string }) =>
  encodeCursor(w.list, w.tenantId, { at: row.updated_at, id: row.id });

/**
 * A list answered whole (a plain array): `whole()` without sync arguments; with them, the sync page that
 * `read` gives for a condition and a row count, its next cursor recorded for the X-Next-Cursor header.
 */
export async function syncedArray<T extends { updated_at: Date; id: string }>(
  ctx: Context,
  list: SyncList,
  args: SyncArrayArgs,
  whole: () => Promise<T[]>,
  read: (where: object, take: number) => Promise<T[]>,
): Promise<T[]> {
  // `read` passes the field's selection: it must read id and updated_at (withSyncKeys).
  const limit = args.limit == null || args.limit < 1 || args.limit > 100 ? 100 : args.limit;
  const w = await openSync(ctx, list, args, limit);
  if (!w) return whole();
  const { rows, next } = syncPage(w, await read(syncWhere(w), syncTake(w)));
  setNextCursor(ctx, list, next);
  return rows;
}

// The horizon: see the header. Only client sessions of this database count (autovacuum does not write
// these rows); the session's role must see the others' xact_start (the same role, or pg_read_all_stats).
export async function syncHorizon(prisma: PrismaClient): Promise<Date> {
  const [row] = await prisma.$queryRaw<{ horizon: Date }[]>`
    SELECT date_trunc('milliseconds', LEAST(statement_timestamp(), min(a.xact_start))) AS horizon
    FROM pg_stat_activity a
    WHERE a.datname = current_database() AND a.pid <> pg_backend_pid() AND a.backend_type = 'client backend'`;
  return row.horizon;
}

function tenantOf(ctx: Context): string {
  if (ctx.viewer?.kind !== 'user') throw new Error('sync needs an organisation viewer');
  return ctx.viewer.tenantId;
}

const RFC3339 = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/i;

/** `updated_since` as a bound: beyond milliseconds (what updated_at stores), a later row starts at the next one. */
function parseSince(text: string): SyncWindow['since'] {
  const m = RFC3339.exec(text.trim());
  const fraction = m?.[2] ?? '';
  const ms = m ? Date.parse(`${m[1]}.${fraction.slice(0, 3).padEnd(3, '0')}${m[3]}`) : NaN;
  if (!Number.isFinite(ms))
    throw invalidParameter('updated_since', 'deve ser uma data e hora RFC 3339, por exemplo 2026-11-25T10:00:00.000Z');
  return /[1-9]/.test(fraction.slice(3)) ? { gte: new Date(ms + 1) } : { gt: new Date(ms) };
}

// Cursor: base64url of [list, tenant, updated_at in ms, id] and a checksum that catches a cursor changed
// by hand. Not a secret: the scoped client is what keeps the rows in the organisation.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const checksum = (payload: string) => createHash('sha256').update(`funil-sync:${payload}`).digest('base64url').slice(0, 12);

function encodeCursor(list: SyncList, tenantId: string, p: Position): string {
  const payload = Buffer.from(JSON.stringify([list, tenantId, p.at.getTime(), p.id])).toString('base64url');
  return `${payload}.${checksum(payload)}`;
}

function decodeCursor(cursor: string, list: SyncList, tenantId: string): Position {
  const bad = (problem = 'não é um cursor válido desta lista') => invalidParameter('cursor', problem);
  const [payload, sum, extra] = cursor.split('.');
  if (!payload || extra !== undefined || sum !== checksum(payload)) throw bad();
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(parts) || parts.length !== 4) throw bad();
  const [l, t, at, id] = parts as unknown[];
  if (l !== list) throw bad();
  if (t !== tenantId) throw bad('pertence a outra organização');
  if (typeof at !== 'number' || !Number.isSafeInteger(at) || typeof id !== 'string' || !UUID.test(id)) throw bad();
  return { at: new Date(at), id };
}

/**
 * A sync page of an envelope list (`data` and `pagination` resolved apart): one read decides the rows
 * and the next cursor, whichever field asks first; `data` asked second reads those rows again by id with
 * its selection (a row edited meanwhile shows its newer state, and comes again later: never missed).
 */
export class SyncedPage<T extends { id: string; updated_at: Date }> {
  private first?: Promise<{ rows: T[]; next: string | null }>;

  /** `read` runs the list's own query under `where` (its filters are added by it), ordered by SYNC_ORDER. */
  constructor(
    readonly window: SyncWindow,
    private readonly read: (where: object, take: number | undefined, query: Record<string, unknown>) => Promise<T[]>,
  ) {}

  rows(query: Record<string, unknown> = {}): Promise<T[]> {
    if (!this.first) {
      this.first = this.load(query);
      return this.first.then((p) => p.rows);
    }
    return this.first.then((p) => (p.rows.length ? this.read({ id: { in: p.rows.map((r) => r.id) } }, undefined, query) : []));
  }

  next(): Promise<string | null> {
    this.first ??= this.load({});
    return this.first.then((p) => p.next);
  }

  private async load(query: Record<string, unknown>) {
    return syncPage(this.window, await this.read(syncWhere(this.window), syncTake(this.window), withSyncKeys(query)));
  }
}
