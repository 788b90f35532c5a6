// A deal's timeline (decisions.md: created, stage moves, won/lost, value and product changes, with actor
// and time). Events are written in the same transaction as the change they describe and deleted with
// the deal.
import type { Prisma } from '../../generated/prisma/client.js';
import { requirePermission, type TenantViewer } from '../../auth/viewer.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { notFound } from '../../errors.js';
import type { Context } from '../../context/context.js';

export type DealEventType = 'created' | 'stage_changed' | 'won' | 'lost' | 'value_changed' | 'products_changed' | 'updated';

export interface DealEventInput {
  /** The deal; defaults to the one `recordEvents` was given. */
  deal_id?: string;
  type: DealEventType;
  from_stage_id?: string | null;
  to_stage_id?: string | null;
  data?: Record<string, unknown>;
}

/**
 * The one writer of deal history: records the events of one change (of one deal, or of many when each
 * event names its `deal_id`); timestamps step by 1 ms so a deal's timeline keeps their order.
 */
export async function recordEvents(db: TenantTx, viewer: TenantViewer, dealId: string | null, events: DealEventInput[]) {
  if (!events.length) return;
  const at = Date.now();
  await db.dealEvent.createMany({
    data: events.map((e, i) => ({
      deal_id: e.deal_id ?? dealId!,
      type: e.type,
      from_stage_id: e.from_stage_id ?? null,
      to_stage_id: e.to_stage_id ?? null,
      data: (e.data ?? {}) as Prisma.InputJsonValue,
      actor_id: viewer.userId,
      created_at: new Date(at + i),
    })),
  });
}

export async function dealHistory(ctx: Context, dealId: string, query: Record<string, unknown> = {}) {
  requirePermission(ctx.viewer, 'pipeline.view');
  if (!(await ctx.db.deal.findUnique({ where: { id: dealId }, select: { id: true } }))) throw notFound('Negócio');
  return ctx.db.dealEvent.findMany({ ...query, where: { deal_id: dealId }, orderBy: [{ created_at: 'asc' }, { id: 'asc' }] });
}
