// Stages one at a time: add, rename/recolor/move, delete (with its deals moved to a target stage).
import { requireTenant } from '../../auth/viewer.js';
import { conflict, invalidInput, notFound } from '../../errors.js';
import type { Context } from '../../context/context.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { requiredText } from '../common/validate.js';
import { DEFAULT_STAGE_COLOR, type StageKind } from './defaults.js';
import { stageInUse } from './foreign-key.js';
import { configTransaction, lockPipeline, moveTo, stagesInOrder, writePositions } from './positions.js';
import { reallocateDeals } from './reallocate.js';
import { checkPosition, NAME_MAX, STAGES_MAX, stageColor } from './validate.js';
import type { Selection } from '../common/types.js';

export async function createStage(
  ctx: Context,
  pipelineId: string,
  input: { name: string; color?: string | null; kind?: StageKind | null },
  query: Selection = {},
) {
  const name = requiredText('name', input.name, NAME_MAX);
  const color = input.color == null ? DEFAULT_STAGE_COLOR : stageColor(input.color);
  if (input.kind) throw invalidInput('Etapas de ganho ou perda não podem ser criadas: apenas etapas regulares podem ser adicionadas');
  const id = await configTransaction(ctx, async (db) => {
    if (!(await lockPipeline(db, pipelineId))) throw notFound('Pipeline');
    const count = await db.stage.count({ where: { pipeline_id: pipelineId } });
    if (count >= STAGES_MAX) throw invalidInput(`Um pipeline aceita no máximo ${STAGES_MAX} etapas`);
    const stages = await stagesInOrder(db, pipelineId);
    await writePositions(db, 'stage', stages);
    const stage = await db.stage.create({ data: { pipeline_id: pipelineId, name, color, position: stages.length }, select: { id: true } });
    return stage.id;
  });
  return ctx.db.stage.findUniqueOrThrow({ ...query, where: { id } });
}

/** Finds a stage and locks its pipeline; the stage is read again under the lock. */
async function lockedStage(db: TenantTx, id: string) {
  const found = await db.stage.findUnique({ where: { id }, select: { pipeline_id: true } });
  if (!found || !(await lockPipeline(db, found.pipeline_id))) throw notFound('Etapa');
  const stage = await db.stage.findUnique({ where: { id }, select: { id: true, pipeline_id: true, kind: true } });
  if (!stage) throw notFound('Etapa');
  return stage;
}

export async function updateStage(
  ctx: Context,
  id: string,
  input: { name?: string | null; color?: string | null; position?: number | null },
  query: Selection = {},
) {
  const data: { name?: string; color?: string } = {};
  if (input.name != null) data.name = requiredText('name', input.name, NAME_MAX);
  if (input.color != null) data.color = stageColor(input.color);
  checkPosition(input.position);
  await configTransaction(ctx, async (db) => {
    const stage = await lockedStage(db, id);
    if (Object.keys(data).length) await db.stage.update({ where: { id }, data, select: { id: true } });
    if (input.position != null) {
      await writePositions(db, 'stage', moveTo(await stagesInOrder(db, stage.pipeline_id), id, input.position));
    }
  });
  return ctx.db.stage.findUniqueOrThrow({ ...query, where: { id } });
}

/**
 * Deletes a regular stage. Its deals move to `target_stage_id` (a stage of the same pipeline); without
 * a target, a stage with deals is a conflict. Deals are never deleted with a stage.
 */
export async function deleteStage(ctx: Context, id: string, targetStageId?: string | null) {
  requireTenant(ctx.viewer);
  if (targetStageId && targetStageId.toLowerCase() === id.toLowerCase())
    throw invalidInput('A etapa de destino deve ser diferente da etapa excluída');
  try {
    await configTransaction(ctx, async (db) => {
      const stage = await lockedStage(db, id);
      if (stage.kind) throw invalidInput('As etapas de ganho e de perda não podem ser excluídas');
      let target: { id: string; kind: StageKind | null } | undefined;
      if (targetStageId) {
        const found = await db.stage.findUnique({ where: { id: targetStageId }, select: { id: true, pipeline_id: true, kind: true } });
        if (!found) throw notFound('Etapa de destino');
        if (found.pipeline_id !== stage.pipeline_id) throw invalidInput('A etapa de destino deve pertencer ao mesmo pipeline');
        target = found;
      }
      const stages = await stagesInOrder(db, stage.pipeline_id);
      if (stages.length <= 1) throw invalidInput('O pipeline deve manter ao menos uma etapa');
      const dealCount = await db.deal.count({ where: { stage_id: id } });
      if (dealCount > 0 && !target) {
        throw conflict('A etapa possui negócios: informe target_stage_id para realocá-los', { deal_count: dealCount });
      }
      if (target) await reallocateDeals(db, ctx, [id], target, dealCount);
      await db.stage.delete({ where: { id }, select: { id: true } });
      await writePositions(
        db,
        'stage',
        stages.filter((s) => s.id !== id),
      );
    });
  } catch (e) {
    throw stageInUse(e);
  }
  return true;
}
