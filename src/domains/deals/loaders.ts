// Per-request batches behind the Deal fields: a page of deals costs one statement per loader, whatever
// its size. Raw statements filter by the viewer's tenant themselves (raw SQL is not scoped).
import DataLoader from 'dataloader';
import { Prisma, type DealProduct, type Lead, type Stage, type Tag, type User } from '../../generated/prisma/client.js';
import type { Context } from '../../context/context.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { tenantIs } from '../../tenant-sql.js';
import { byKey, defineLoader, perRequest } from '../../context/loaders.js';
import { DEAL_CARD, isList, LEAD_COLUMNS, LEAD_JOIN, TODO_JOIN, type LeadColumn } from './card.js';

/** Raw SQL rather than a planned Prisma query: this runs on every page of deals, and a raw statement skips query planning. */
export const leadById = defineLoader(
  (ctx) =>
    new DataLoader<string, Lead | null>(async (ids) => {
      const rows = await ctx.db.$tenantQuery<Lead[]>(
        (tenant) => Prisma.sql`
        SELECT id, tenant_id, name, surname, phone, whatsapp_user_id, whatsapp_username, email, company, avatar_url, status_id, custom_fields, created_at, updated_at
        FROM leads WHERE ${tenantIs(tenant)} AND id IN (${Prisma.join(ids.map((id) => Prisma.sql`${id}::uuid`))})`,
      );
      return byKey(ids, rows, (r) => r.id, null);
    }),
);

export const stageById = defineLoader(
  (ctx) =>
    new DataLoader<string, Stage | null>(async (ids) =>
      byKey(ids, await ctx.db.stage.findMany({ where: { id: { in: [...ids] } } }), (r) => r.id, null),
    ),
);

export const userById = defineLoader(
  (ctx) =>
    new DataLoader<string, User | null>(async (ids) =>
      byKey(ids, await ctx.db.user.findMany({ where: { id: { in: [...ids] } } }), (r) => r.id, null),
    ),
);

/** The lead's contact fields as a deal shows them (read at read time, never copied). */
export type DealLeadFields = Pick<Lead, LeadColumn>;

/**
 * Everything a deal card shows beyond its own columns: the lead's contact fields, the lines, the tags
 * and the todo counts, read for a whole page of deals in one statement.
 */
export interface DealExtras {
  lead: DealLeadFields | null;
  products: DealProduct[];
  tags: Tag[];
  pending: number;
  overdue: number;
}

type Json<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] extends Prisma.Decimal ? number : T[K] };

/** The extras as the statement gives them (JSON: dates as text, amounts as numbers). */
export type ExtrasJson = Omit<DealExtras, 'products' | 'tags'> & { products: Json<DealProduct>[] | null; tags: Json<Tag>[] | null };

const EMPTY: DealExtras = { lead: null, products: [], tags: [], pending: 0, overdue: 0 };

const LISTS = Object.entries(DEAL_CARD).flatMap(([name, entry]) => (isList(entry) ? [[name, entry] as const] : []));

/**
 * A deal's extras as one JSON value over `d`, derived from the card's declarations (card.ts): the lead
 * columns its fields read, the whole rows of its lists in their order, its todo counts. Needs
 * LEAD_JOIN and TODO_JOIN.
 */
export const EXTRAS_SQL = `json_build_object(
  'lead', CASE WHEN l.id IS NULL THEN NULL ELSE json_build_object(${LEAD_COLUMNS.map((c) => `'${c}', l.${c}`).join(', ')}) END,
  ${LISTS.map(([name, list]) => `'${name}', (SELECT json_agg(row_to_json(${list.row}) ORDER BY ${list.order}) FROM ${list.from} WHERE ${list.where})`).join(',\n  ')},
  'pending', todo.pending, 'overdue', todo.overdue)`;

/** Extras from their JSON (a statement's, or an announcement's through Redis): rows with their dates and amounts. */
export function decodeExtras(json: ExtrasJson): DealExtras {
  return {
    lead: json.lead,
    products: (json.products ?? []).map((l) => ({ ...l, price: new Prisma.Decimal(l.price), created_at: new Date(l.created_at) })),
    tags: (json.tags ?? []).map((t) => ({ ...t, created_at: new Date(t.created_at), updated_at: new Date(t.updated_at) })),
    pending: Number(json.pending),
    overdue: Number(json.overdue),
  };
}

/** Extras already loaded in this request, readable synchronously (see `extrasOf`). */
const SETTLED = {};
const settled = (ctx: Context) => perRequest(ctx, SETTLED, () => new Map<string, DealExtras>());

/** The extras of some deals in one statement, on any scoped client (a request's, or a transaction's). */
export async function queryDealExtras(
  db: Pick<TenantTx, '$tenantQuery'>,
  ids: readonly string[],
): Promise<(DealExtras & { deal_id: string })[]> {
  const rows = await db.$tenantQuery<{ deal_id: string; extras: ExtrasJson }[]>(
    (tenant) => Prisma.sql`
    SELECT d.id AS deal_id, ${Prisma.raw(EXTRAS_SQL)} AS extras
    FROM deals d ${Prisma.raw(LEAD_JOIN)} ${Prisma.raw(TODO_JOIN)}
    WHERE ${tenantIs(tenant, 'd')} AND d.id IN (${Prisma.join(ids.map((id) => Prisma.sql`${id}::uuid`))})`,
  );
  return rows.map((r) => ({ deal_id: r.deal_id, ...decodeExtras(r.extras) }));
}

export const dealExtras = defineLoader(
  (ctx) =>
    new DataLoader<string, DealExtras>(async (ids) => {
      const result = byKey(ids, await queryDealExtras(ctx.db, ids), (r) => r.deal_id, EMPTY);
      const known = settled(ctx);
      ids.forEach((id, i) => known.set(id, result[i]));
      return result;
    }),
);

/**
 * A deal's extras, picked: synchronously when this request already loaded them (a list primes the
 * whole page at once, so a hundred deals do not cost thousands of promises), else through the loader.
 */
export function extrasOf<T>(ctx: Context, dealId: string, pick: (e: DealExtras) => T): T | Promise<T> {
  const hit = settled(ctx).get(dealId);
  return hit ? pick(hit) : dealExtras(ctx).load(dealId).then(pick);
}

/**
 * A write's answer from what the write saw: the deal's extras read inside its transaction (after its
 * own changes, under its lock) become this request's extras, so the answer never carries lines or a
 * total that another writer committed after it (decisions.md "A write's answer reflects that write alone").
 */
export async function settleDealExtras(ctx: Context, db: Pick<TenantTx, '$tenantQuery'>, id: string): Promise<void> {
  const [extras] = await queryDealExtras(db, [id]);
  settleExtras(ctx, id, extras);
}

/** Extras known without reading them (a live event carries them): this request's deal fields read these. */
export function settleExtras(ctx: Context, id: string, extras: DealExtras | undefined): void {
  const value = extras ?? EMPTY;
  settled(ctx).set(id, value);
  dealExtras(ctx).clear(id).prime(id, value);
}
