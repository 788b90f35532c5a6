// A deal as its REST read (GET /backend/pipeline/deals/{id}) returns it: the `data` of deal events.
// The same fields as the Deal type of types.ts without its graph-only edges, read for any number of
// deals in two statements (the rows, and the extras every deal card shows). test/webhooks/events.test.ts
// compares an event's data with the REST read, so a field added to Deal and not here fails there.
import type { Deal as DealRow } from '../../generated/prisma/client.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { Decimal, toNumber } from '../common/money.js';
import { queryDealExtras, type DealExtras } from './loaders.js';

export type DealPayload = Record<string, unknown> & { id: string };

export function dealPayload(deal: DealRow, extras: DealExtras | undefined): DealPayload {
  const lead = extras?.lead ?? null;
  return {
    id: deal.id,
    number: deal.number,
    pipeline_id: deal.pipeline_id,
    stage_id: deal.stage_id,
    lead_id: deal.lead_id,
    owner_id: deal.owner_id,
    value: toNumber(deal.value),
    total: toNumber(deal.total),
    origin: deal.origin,
    loss_reason: deal.loss_reason,
    note: deal.note,
    won_at: deal.won_at?.toISOString() ?? null,
    lost_at: deal.lost_at?.toISOString() ?? null,
    stage_entered_at: deal.stage_entered_at.toISOString(),
    created_at: deal.created_at.toISOString(),
    updated_at: deal.updated_at.toISOString(),
    lead_name: lead?.name ?? null,
    lead_surname: lead?.surname ?? null,
    lead_company: lead?.company ?? null,
    lead_email: lead?.email ?? null,
    lead_phone: lead?.phone ?? null,
    lead_avatar: lead?.avatar_url ?? null,
    lead_status_id: lead?.status_id ?? null,
    products: (extras?.products ?? []).map((l) => ({
      id: l.id,
      product_id: l.product_id,
      name: l.name,
      price: toNumber(l.price),
      qty: l.qty,
      custom: l.custom,
      total: toNumber(new Decimal(l.price).times(l.qty)),
    })),
    tags: (extras?.tags ?? []).map((t) => ({ id: t.id, name: t.name, color: t.color, created_at: t.created_at.toISOString(), updated_at: t.updated_at.toISOString() })),
    pending_todos: extras?.pending ?? 0,
    overdue_todos: extras?.overdue ?? 0,
  };
}

/** A deal's row and its card extras, read together inside a transaction. */
export interface DealSnapshot {
  deal: DealRow;
  extras: DealExtras | undefined;
}

/** The deals (of those ids that exist) with their extras, by id: two statements for any number. */
export async function dealSnapshots(db: TenantTx, ids: readonly string[]): Promise<Map<string, DealSnapshot>> {
  const unique = [...new Set(ids)];
  if (!unique.length) return new Map();
  const deals = await db.deal.findMany({ where: { id: { in: unique } } });
  const extras = await queryDealExtras(db, unique);
  const extrasById = new Map(extras.map((e) => [e.deal_id, e]));
  return new Map(deals.map((d) => [d.id, { deal: d, extras: extrasById.get(d.id) }]));
}

/** The deals (of those ids that exist) as REST reads them, by id. */
export async function dealPayloads(db: TenantTx, ids: readonly string[]): Promise<Map<string, DealPayload>> {
  const snapshots = await dealSnapshots(db, ids);
  return new Map([...snapshots].map(([id, s]) => [id, dealPayload(s.deal, s.extras)]));
}
