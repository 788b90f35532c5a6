// Per-request batches behind the Deal fields: a page of deals costs one statement per loader, whatever
// its size. Raw statements filter by the viewer's tenant themselves (raw SQL is not scoped).
import DataLoader from 'dataloader';
import { Prisma, type DealProduct, type Lead, type Stage, type Tag, type User } from '../../generated/prisma/client.js';
import type { Context } from '../../context/context.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { byKey, defineLoader, perRequest } from '../../context/loaders.js';

/** Raw SQL rather than a planned Prisma query: this runs on every page of deals, and a raw statement skips query planning. */
export const leadById = defineLoader(
  (ctx) =>
    new DataLoader<string, Lead | null>(async (ids) => {
      const rows = await ctx.db.$tenantQuery<Lead[]>(
        (tenant) => Prisma.sql`
        SELECT id, tenant_id, name, surname, phone, email, company, avatar_url, status_id, custom_fields, created_at, updated_at
        FROM leads WHERE tenant_id = ${tenant} AND id IN (${Prisma.join(ids.map((id) => Prisma.sql`${id}::uuid`))})`,
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
export type DealLeadFields = Pick<Lead, 'name' | 'surname' | 'company' | 'email' | 'phone' | 'avatar_url' | 'status_id'>;

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

interface ExtrasRow extends Partial<DealLeadFields> {
  deal_id: string;
  lead_found: boolean | null;
  products: (Omit<DealProduct, 'price' | 'created_at'> & { price: string; created_at: string })[] | null;
  tags: (Omit<Tag, 'created_at' | 'updated_at'> & { created_at: string; updated_at: string })[] | null;
  pending: number;
  overdue: number;
}

const EMPTY: DealExtras = { lead: null, products: [], tags: [], pending: 0, overdue: 0 };

/** Extras already loaded in this request, readable synchronously (see `extrasOf`). */
const SETTLED = {};
const settled = (ctx: Context) => perRequest(ctx, SETTLED, () => new Map<string, DealExtras>());

/** The extras of some deals in one statement, on any scoped client (a request's, or a transaction's: events). */
export async function queryDealExtras(db: Pick<TenantTx, '$tenantQuery'>, ids: readonly string[]): Promise<(DealExtras & { deal_id: string })[]> {
  const rows = await db.$tenantQuery<ExtrasRow[]>(
    (tenant) => Prisma.sql`
    SELECT d.id AS deal_id, l.id IS NOT NULL AS lead_found,
      l.name, l.surname, l.company, l.email, l.phone, l.avatar_url, l.status_id,
      (SELECT json_agg(json_build_object('id', p.id, 'tenant_id', p.tenant_id, 'deal_id', p.deal_id, 'product_id', p.product_id,
                'name', p.name, 'price', p.price::text, 'qty', p.qty, 'custom', p.custom, 'position', p.position, 'created_at', p.created_at)
              ORDER BY p.position, p.created_at, p.id)
         FROM deal_products p WHERE p.tenant_id = d.tenant_id AND p.deal_id = d.id) AS products,
      (SELECT json_agg(json_build_object('id', t.id, 'tenant_id', t.tenant_id, 'name', t.name, 'color', t.color,
                'created_at', t.created_at, 'updated_at', t.updated_at) ORDER BY t.name, t.id)
         FROM deal_tags dt JOIN tags t ON t.tenant_id = dt.tenant_id AND t.id = dt.tag_id
         WHERE dt.tenant_id = d.tenant_id AND dt.deal_id = d.id) AS tags,
      todo.pending, todo.overdue
    FROM deals d
    LEFT JOIN leads l ON l.tenant_id = d.tenant_id AND l.id = d.lead_id
    CROSS JOIN LATERAL (
      SELECT count(*)::int AS pending, (count(*) FILTER (WHERE a.due_at < now()))::int AS overdue
      FROM activities a WHERE a.tenant_id = d.tenant_id AND a.deal_id = d.id AND NOT a.done
    ) todo
    WHERE d.tenant_id = ${tenant} AND d.id IN (${Prisma.join(ids.map((id) => Prisma.sql`${id}::uuid`))})`,
  );
  return rows.map((r) => ({
    deal_id: r.deal_id,
    lead: r.lead_found
      ? { name: r.name!, surname: r.surname ?? null, company: r.company ?? null, email: r.email ?? null, phone: r.phone!, avatar_url: r.avatar_url ?? null, status_id: r.status_id ?? null }
      : null,
    products: (r.products ?? []).map((l) => ({ ...l, price: new Prisma.Decimal(l.price), created_at: new Date(l.created_at) })),
    tags: (r.tags ?? []).map((t) => ({ ...t, created_at: new Date(t.created_at), updated_at: new Date(t.updated_at) })),
    pending: Number(r.pending),
    overdue: Number(r.overdue),
  }));
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
