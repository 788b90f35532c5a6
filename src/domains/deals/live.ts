// Live deals for the `dealChanged(pipeline_id)` subscription: every deal created, edited, moved or
// deleted in a pipeline, announced once its transaction commits (an event of a rolled-back change is
// never sent). An announcement carries the deal's row and card extras as the change left them, read in
// that transaction by the same statements as its webhook events, so a subscriber answers without
// reading the database (only graph edges such as Deal.lead are read, when selected). One hub message
// per pipeline per transaction (a pipeline save that moves a thousand deals is one message).
import { requireTenant } from '../../auth/viewer.js';
import type { Config } from '../../config.js';
import type { Context } from '../../context/context.js';
import { afterCommit } from '../../db/after-commit.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { notFound } from '../../errors.js';
import { liveHub, untilStopped } from '../../events/live.js';
import type { Deal as DealRow } from '../../generated/prisma/client.js';
import { pipe, Repeater } from 'graphql-yoga';
import type { DealExtras } from './loaders.js';
import { settleExtras } from './loaders.js';
import type { DealSnapshot } from './payload.js';

export type DealChangeKind = 'created' | 'updated' | 'moved' | 'deleted';

export interface DealChange {
  kind: DealChangeKind;
  deal_id: string;
  pipeline_id: string;
  from_stage_id: string | null;
  to_stage_id: string | null;
  /** Null for `deleted`. Through Redis its dates and amounts arrive as strings, which Deal's fields read alike. */
  deal: Omit<DealSnapshot, 'payload'> | null;
}

/** The change's announcements, grouped by pipeline, sent once `tx` commits. */
export function announceDealChanges(tx: TenantTx, config: Config, changes: DealChange[]) {
  if (!changes.length) return;
  const byPipeline = new Map<string, DealChange[]>();
  for (const c of changes) byPipeline.set(c.pipeline_id, [...(byPipeline.get(c.pipeline_id) ?? []), c]);
  const tenantId = tx.$tenantId;
  afterCommit(tx, () => {
    for (const [pipelineId, events] of byPipeline) liveHub(config).publish('dealChanged', `${tenantId}:${pipelineId}`, { events });
  });
}

/** What the subscription's root field resolves to: the change, with the deal as a Deal row. */
export interface DealChangeSource extends Omit<DealChange, 'deal'> {
  deal: DealRow | null;
}

/**
 * Each change of the caller's organisation's pipeline. An unknown pipeline (or another organisation's)
 * is 404 before anything is streamed.
 */
export async function dealChangesFor(ctx: Context, pipelineId: string): Promise<AsyncIterable<DealChange>> {
  const viewer = requireTenant(ctx.viewer);
  if (!(await ctx.db.pipeline.findUnique({ where: { id: pipelineId }, select: { id: true } }))) throw notFound('Pipeline');
  return pipe(liveHub(ctx.config).subscribe('dealChanged', `${viewer.tenantId}:${pipelineId}`), untilStopped(ctx.config), each<DealChange>);
}

/** One value per event of each batch. */
function each<T>(source: AsyncIterable<{ events: unknown[] }>): AsyncIterable<T> {
  return new Repeater<T>(async (push, stop) => {
    const iterator = source[Symbol.asyncIterator]();
    void stop.then(() => iterator.return?.());
    let next;
    while (!(next = await iterator.next()).done) for (const event of next.value.events) await push(event as T);
    stop();
  });
}

/**
 * The change as the root field answers it. The subscription's context lives as long as the stream: its
 * per-request caches are dropped for each event (no stale lead or stage from an earlier one), then the
 * announced extras are settled for the deal's fields to read.
 */
export function resolveDealChange(ctx: Context, change: DealChange): DealChangeSource {
  ctx.perRequest.clear();
  if (change.deal) settleExtras(ctx, change.deal_id, change.deal.extras as DealExtras | undefined);
  return { ...change, deal: change.deal ? (change.deal.deal as DealRow) : null };
}
