// Moving deals between stages of one pipeline: shared by stage deletion and the transactional save.
import type { Context } from '../../context/context.js';
import { invalidInput } from '../../errors.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import type { StageKind } from './defaults.js';
import { recordDealChange } from '../deals/history.js';
import { stageState, transitionEvent } from '../deals/stage-transition.js';

/**
 * Moves every deal of `fromStageIds` to `target`, applying the stage-move rules: a move clears won_at,
 * lost_at and loss_reason; into the won stage it sets won_at. Deals cannot be moved into the lost stage
 * this way, because each lost deal needs its own loss reason (400). Each moved deal gets a history event
 * (`stage_changed`, or `won`) and its events, like a move through the deals API, marked `{reallocated: true}`.
 */
export async function reallocateDeals(
  db: TenantTx,
  ctx: Pick<Context, 'viewer' | 'config'>,
  fromStageIds: string[],
  target: { id: string; kind: StageKind | null },
  dealCount: number,
) {
  if (dealCount === 0 || fromStageIds.length === 0) return;
  if (target.kind === 'lost') {
    throw invalidInput('Negócios não podem ser realocados para a etapa de perda: cada negócio perdido exige um motivo de perda');
  }
  const deals = await db.deal.findMany({ where: { stage_id: { in: fromStageIds } }, select: { id: true, stage_id: true } });
  if (!deals.length) return;
  await db.deal.updateMany({
    where: { id: { in: deals.map((d) => d.id) } },
    data: { stage_id: target.id, ...stageState(target.kind, null, new Date()) },
  });
  await recordDealChange(
    db,
    ctx,
    null,
    deals.map((d) => ({
      deal_id: d.id,
      type: transitionEvent(target.kind),
      from_stage_id: d.stage_id,
      to_stage_id: target.id,
      data: { reallocated: true },
    })),
  );
}
