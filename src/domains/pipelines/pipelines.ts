// Pipelines: read, create (with the default stages), reorder among groups, delete.
import { invalidInput, notFound, invalidField } from '../../errors.js';
import type { Context } from '../../context/context.js';
import { optionalText, requiredText } from '../common/validate.js';
import { DEFAULT_LOSS_REASONS, DEFAULT_STAGE_COLOR, DEFAULT_STAGES } from './defaults.js';
import { insertGroup, requireGroup } from './groups.js';
import { compactPipelines, layoutTransaction, lockPipeline, pipelinesInOrder, placeAt, writePositions } from './positions.js';
import { DESCRIPTION_MAX, NAME_MAX } from './validate.js';
import { recordDealsDeleted } from '../deals/history.js';
import type { Selection } from '../common/types.js';

/** The listing's fields (groups, pipelines) run their own planned queries; this checks access. */
export function pipelineListing(_ctx: Context): Record<string, never> {
  return {};
}

export async function getPipeline(ctx: Context, id: string, query: Selection = {}) {
  const pipeline = await ctx.db.pipeline.findUnique({ ...query, where: { id } });
  if (!pipeline) throw notFound('Pipeline');
  return pipeline;
}

export interface CreatePipelineInput {
  name: string;
  description?: string | null;
  group_id?: string | null;
  new_group_name?: string | null;
}

export async function createPipeline(ctx: Context, input: CreatePipelineInput, query: Selection = {}) {
  const name = requiredText('name', input.name, NAME_MAX);
  const description = optionalText('description', input.description, DESCRIPTION_MAX) ?? '';
  const newGroupName = input.new_group_name?.trim() ? requiredText('new_group_name', input.new_group_name, NAME_MAX) : undefined;
  if (input.group_id && newGroupName) throw invalidInput('Informe group_id ou new_group_name, não ambos');
  if (!input.group_id && !newGroupName) throw invalidInput('Informe group_id ou new_group_name');

  const id = await layoutTransaction(ctx, async (db) => {
    let groupId = input.group_id;
    if (groupId) {
      await requireGroup(db, groupId);
    } else {
      groupId = (await insertGroup(db, newGroupName!)).id;
    }
    const { _max } = await db.pipeline.aggregate({ where: { group_id: groupId }, _max: { position: true } });
    const pipeline = await db.pipeline.create({
      data: { group_id: groupId, name, description, position: (_max.position ?? -1) + 1, loss_reasons: DEFAULT_LOSS_REASONS },
      select: { id: true },
    });
    await db.stage.createMany({
      data: DEFAULT_STAGES.map((s, position) => ({
        pipeline_id: pipeline.id,
        name: s.name,
        kind: s.kind,
        color: DEFAULT_STAGE_COLOR,
        position,
      })),
    });
    return pipeline.id;
  });
  return ctx.db.pipeline.findUniqueOrThrow({ ...query, where: { id } });
}

export interface ReorderInput {
  pipeline_id: string;
  group_id: string;
  before_pipeline_id?: string | null;
}

/** Moves a pipeline into `group_id`, right before `before_pipeline_id` or last. Positions stay 0..n-1. */
export async function reorderPipelines(ctx: Context, raw: ReorderInput): Promise<Record<string, never>> {
  const input = {
    pipeline_id: raw.pipeline_id.toLowerCase(),
    group_id: raw.group_id.toLowerCase(),
    before_pipeline_id: raw.before_pipeline_id?.toLowerCase(),
  };
  if (input.before_pipeline_id && input.before_pipeline_id === input.pipeline_id) {
    throw invalidField('before_pipeline_id', 'deve ser outro pipeline');
  }
  await layoutTransaction(ctx, async (db) => {
    const moved = await db.pipeline.findUnique({ where: { id: input.pipeline_id }, select: { id: true, group_id: true } });
    if (!moved) throw notFound('Pipeline');
    await requireGroup(db, input.group_id);
    if (input.before_pipeline_id) {
      const before = await db.pipeline.findUnique({ where: { id: input.before_pipeline_id }, select: { group_id: true } });
      if (!before) throw notFound('Pipeline');
      if (before.group_id !== input.group_id) throw invalidField('before_pipeline_id', 'deve ser um pipeline do grupo de destino');
    }
    if (moved.group_id !== input.group_id) {
      await db.pipeline.update({ where: { id: moved.id }, data: { group_id: input.group_id }, select: { id: true } });
      await compactPipelines(db, moved.group_id);
    }
    const others = await pipelinesInOrder(db, input.group_id, moved.id);
    const at = input.before_pipeline_id ? others.findIndex((p) => p.id === input.before_pipeline_id) : others.length;
    await writePositions(db, 'pipeline', placeAt(others, at, moved.id));
  });
  return {};
}

/** Deletes a pipeline with its stages and deals (and the deals' lines, tags, activities and history). */
export async function deletePipeline(ctx: Context, id: string) {
  await layoutTransaction(ctx, async (db) => {
    if (!(await lockPipeline(db, id))) throw notFound('Pipeline');
    // Its deals go with it (cascade): each one is a deal.deleted.
    const deals = await db.deal.findMany({ where: { pipeline_id: id }, select: { id: true, pipeline_id: true } });
    const { group_id } = await db.pipeline.delete({ where: { id }, select: { group_id: true } });
    await recordDealsDeleted(db, ctx, deals);
    await compactPipelines(db, group_id);
  });
  return true;
}
