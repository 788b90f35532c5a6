// A deal's timeline (decisions.md: created, stage moves, won/lost, value and product changes, with actor
// and time) and the deal events of the outbox: both written by one call in the same transaction as the
// change they describe. Timeline entries are deleted with the deal.
import { requireTenant } from '../../auth/viewer.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { notFound } from '../../errors.js';
import type { Context } from '../../context/context.js';
import { emitMany, type EventInput } from '../../events/emit.js';
import { announceDealChanges, type DealChange } from './live.js';
import { dealSnapshots, type DealPayload, type DealSnapshot, type HistoryRow } from './payload.js';

export type DealEventType = 'created' | 'stage_changed' | 'won' | 'lost' | 'value_changed' | 'products_changed' | 'updated';

export interface DealEventInput {
  /** The deal; defaults to the one `recordDealChange` was given. */
  deal_id?: string;
  type: DealEventType;
  from_stage_id?: string | null;
  to_stage_id?: string | null;
  data?: Record<string, unknown>;
}

/**
 * The one writer of deal history and deal events: records the timeline entries of one change (of one
 * deal, or of many when each entry names its `deal_id`) and emits the matching events, with each deal
 * as its REST read returns it after the change, in the same transaction, and announces the change to
 * live subscribers once it commits. Timestamps step by 1 ms so a deal's timeline keeps their order.
 * Nothing else writes either.
 */
export async function recordDealChange(
  db: TenantTx,
  ctx: Pick<Context, 'viewer' | 'config'>,
  dealId: string | null,
  entries: DealEventInput[],
): Promise<Map<string, DealSnapshot>> {
  if (!entries.length) return new Map();
  const viewer = requireTenant(ctx.viewer);
  const at = Date.now();
  const rows: HistoryRow[] = entries.map((e, i) => ({
    deal_id: e.deal_id ?? dealId!,
    type: e.type,
    from_stage_id: e.from_stage_id ?? null,
    to_stage_id: e.to_stage_id ?? null,
    data: e.data ?? {},
    actor_id: viewer.userId,
    created_at: new Date(at + i),
  }));
  // The history rows are written by the statement that reads the deals after the change.
  const snapshots = await dealSnapshots(
    db,
    rows.map((r) => r.deal_id),
    rows,
  );
  const deals = new Map([...snapshots].map(([id, s]) => [id, s.payload]));
  await emitMany(db, dealEvents(rows, deals));
  announceDealChanges(db, ctx.config, liveChanges(rows, snapshots));
  return snapshots;
}

/** Deals were deleted (their history goes with them): `deal.deleted` with `{id}` for each, and the live `deleted`. */
export async function recordDealsDeleted(db: TenantTx, ctx: Pick<Context, 'config'>, deals: { id: string; pipeline_id: string }[]) {
  await emitMany(
    db,
    deals.map(({ id }) => ({ type: 'deal.deleted', data: { id } })),
  );
  announceDealChanges(
    db,
    ctx.config,
    deals.map((d) => ({ kind: 'deleted', deal_id: d.id, pipeline_id: d.pipeline_id, from_stage_id: null, to_stage_id: null, deal: null })),
  );
}

/** The live changes of the history rows: `created`; `moved` (with from/to) per stage move; one `updated` per deal for edits. */
function liveChanges(
  rows: { deal_id: string; type: string; from_stage_id: string | null; to_stage_id: string | null }[],
  snapshots: Map<string, DealSnapshot>,
): DealChange[] {
  const changes: DealChange[] = [];
  const updated = new Set<string>();
  for (const row of rows) {
    const snapshot = snapshots.get(row.deal_id);
    if (!snapshot) continue;
    const change = {
      deal_id: row.deal_id,
      pipeline_id: snapshot.deal.pipeline_id,
      from_stage_id: null,
      to_stage_id: null,
      deal: { deal: snapshot.deal, extras: snapshot.extras },
    };
    switch (row.type as DealEventType) {
      case 'created':
        changes.push({ ...change, kind: 'created', to_stage_id: row.to_stage_id });
        break;
      case 'stage_changed':
      case 'won':
      case 'lost':
        changes.push({ ...change, kind: 'moved', from_stage_id: row.from_stage_id, to_stage_id: row.to_stage_id });
        break;
      default:
        if (!updated.has(row.deal_id)) changes.push({ ...change, kind: 'updated' });
        updated.add(row.deal_id);
    }
  }
  return changes;
}

/**
 * decisions.md "Webhooks and deliveries": a stage move sends `deal.stage_changed` (with from/to), then
 * `deal.won` / `deal.lost` when it entered such a stage; edits send one `deal.updated` per deal. A deal
 * created straight into the won or lost stage sends `deal.created`, then `deal.won` / `deal.lost`.
 */
function dealEvents(
  rows: { deal_id: string; type: string; from_stage_id: string | null; to_stage_id: string | null }[],
  deals: Map<string, DealPayload>,
): EventInput[] {
  const events: EventInput[] = [];
  const updated = new Set<string>();
  for (const row of rows) {
    const deal = deals.get(row.deal_id);
    if (!deal) continue;
    const moved = { ...deal, from_stage_id: row.from_stage_id, to_stage_id: row.to_stage_id };
    switch (row.type as DealEventType) {
      case 'created':
        events.push({ type: 'deal.created', data: deal });
        if (deal.won_at) events.push({ type: 'deal.won', data: deal });
        if (deal.lost_at) events.push({ type: 'deal.lost', data: deal });
        break;
      case 'stage_changed':
        events.push({ type: 'deal.stage_changed', data: moved });
        break;
      case 'won':
      case 'lost':
        events.push({ type: 'deal.stage_changed', data: moved }, { type: row.type === 'won' ? 'deal.won' : 'deal.lost', data: deal });
        break;
      case 'value_changed':
      case 'products_changed':
      case 'updated':
        if (!updated.has(row.deal_id)) events.push({ type: 'deal.updated', data: deal });
        updated.add(row.deal_id);
        break;
    }
  }
  return events;
}

export async function dealHistory(ctx: Context, dealId: string, query: Record<string, unknown> = {}) {
  if (!(await ctx.db.deal.findUnique({ where: { id: dealId }, select: { id: true } }))) throw notFound('Negócio');
  return ctx.db.dealEvent.findMany({ ...query, where: { deal_id: dealId }, orderBy: [{ created_at: 'asc' }, { id: 'asc' }] });
}
