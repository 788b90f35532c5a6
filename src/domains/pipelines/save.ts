// The transactional save, PUT /backend/pipelines/{id}: the pipeline's fields and its whole stage list.
import type { Prisma } from '../../generated/prisma/client.js';
import { requireTenant } from '../../auth/viewer.js';
import { conflict, invalidInput, notFound, invalidField } from '../../errors.js';
import type { Context } from '../../context/context.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { isUuid, optionalText, requiredText } from '../common/validate.js';
import { DEFAULT_STAGE_COLOR, type StageKind } from './defaults.js';
import { stageInUse } from './foreign-key.js';
import { configTransaction, lockPipeline, stagesInOrder } from './positions.js';
import { reallocateDeals } from './reallocate.js';
import { DESCRIPTION_MAX, lossReasons, NAME_MAX, STAGES_MAX, stageColor } from './validate.js';
import type { Selection } from '../common/types.js';

export interface ConfigStage {
  id?: string | null;
  name: string;
  color?: string | null;
  kind?: StageKind | null;
  position?: number | null;
  pipeline_id?: string | null;
}

export interface SavePipelineInput {
  name: string;
  description?: string | null;
  stages: ConfigStage[];
  loss_reasons?: string[] | null;
  reallocation_targets?: Record<string, unknown> | null;
}

/** A stage entry of the save, validated; no id creates a stage. */
interface Entry {
  id?: string;
  name: string;
  color?: string;
}

type CurrentStage = Awaited<ReturnType<typeof stagesInOrder>>[number];

/**
 * The transactional save: name, description, loss reasons and the whole stage list at once. The array
 * order is the board order; entries without id create regular stages; stages left out are deleted, and
 * their deals move to the stage `reallocation_targets` names (which must remain). All or nothing.
 */
export async function savePipeline(ctx: Context, id: string, input: SavePipelineInput, query: Selection = {}) {
  requireTenant(ctx.viewer);
  const name = requiredText('name', input.name, NAME_MAX);
  const description = optionalText('description', input.description, DESCRIPTION_MAX);
  const reasons = input.loss_reasons == null ? undefined : lossReasons(input.loss_reasons);
  const entries = stageEntries(input.stages);
  const listedIds = entries.flatMap((e) => (e.id ? [e.id] : []));
  if (new Set(listedIds).size !== listedIds.length) throw invalidField('stages', 'contém a mesma etapa mais de uma vez');
  const targets = reallocationTargets(input.reallocation_targets ?? {});

  try {
    await configTransaction(ctx, async (db) => {
      if (!(await lockPipeline(db, id))) throw notFound('Pipeline');
      const current = await stagesInOrder(db, id);
      const byId = new Map(current.map((s) => [s.id, s]));

      const foreign = listedIds.filter((sid) => !byId.has(sid));
      if (foreign.length) {
        const elsewhere = await db.stage.findMany({ where: { id: { in: foreign } }, select: { id: true } });
        if (elsewhere.length) throw invalidField('stages', 'contém uma etapa que não pertence a este pipeline');
        throw notFound('Etapa');
      }
      const listed = new Set(listedIds);
      const removed = current.filter((s) => !listed.has(s.id));
      if (removed.some((s) => s.kind)) throw invalidInput('As etapas de ganho e de perda não podem ser removidas do pipeline');
      await removeStages(db, ctx, id, removed, { listed, targets, byId });
      await writeStages(db, id, entries, byId);

      const data: Prisma.PipelineUpdateInput = { name };
      if (description !== undefined) data.description = description ?? '';
      if (reasons) data.loss_reasons = reasons;
      await db.pipeline.update({ where: { id }, data, select: { id: true } });
    });
  } catch (e) {
    throw stageInUse(e);
  }
  return ctx.db.pipeline.findUniqueOrThrow({ ...query, where: { id } });
}

function stageEntries(stages: ConfigStage[]): Entry[] {
  if (!stages.length) throw invalidField('stages', 'deve conter ao menos uma etapa');
  if (stages.length > STAGES_MAX) throw invalidInput(`Um pipeline aceita no máximo ${STAGES_MAX} etapas`);
  return stages.map((s, i) => {
    const name = requiredText(`stages[${i}].name`, s.name, NAME_MAX);
    const color = s.color == null ? undefined : stageColor(s.color);
    if (!s.id && s.kind) throw invalidInput('Etapas de ganho ou perda não podem ser criadas: novas etapas são sempre regulares');
    return { id: s.id?.toLowerCase() ?? undefined, name, color };
  });
}

/** Removed stage id → destination stage id, both lower-cased. */
function reallocationTargets(raw: Record<string, unknown>): Map<string, string> {
  const targets = new Map<string, string>();
  for (const [from, to] of Object.entries(raw)) {
    if (!isUuid(from) || typeof to !== 'string' || !isUuid(to)) {
      throw invalidField('reallocation_targets', 'deve mapear o id de uma etapa removida ao id da etapa de destino (UUIDs)');
    }
    targets.set(from.toLowerCase(), to.toLowerCase());
  }
  return targets;
}

/** Deletes the stages left out, after moving their deals to a destination that remains in the list. */
async function removeStages(
  db: TenantTx,
  ctx: Pick<Context, 'viewer' | 'config'>,
  pipelineId: string,
  removed: CurrentStage[],
  plan: { listed: Set<string>; targets: Map<string, string>; byId: Map<string, CurrentStage> },
) {
  const { listed, targets, byId } = plan;
  const counts = removed.length
    ? await db.deal.groupBy({ by: ['stage_id'], where: { stage_id: { in: removed.map((s) => s.id) } }, _count: { _all: true } })
    : [];
  const dealsIn = new Map(counts.map((c) => [c.stage_id, c._count._all]));
  const missing = removed.filter((s) => dealsIn.get(s.id) && !targets.has(s.id));
  if (missing.length) {
    throw conflict('Etapas removidas possuem negócios: informe uma etapa de destino em reallocation_targets', {
      stage_ids: missing.map((s) => s.id),
    });
  }
  // Targets of stages that are not removed are ignored.
  const moves = new Map<string, string[]>();
  for (const s of removed) {
    const to = targets.get(s.id);
    if (!to) continue;
    if (!listed.has(to)) throw invalidInput('O destino de uma realocação deve ser uma etapa que permanece no pipeline');
    if (dealsIn.get(s.id)) moves.set(to, [...(moves.get(to) ?? []), s.id]);
  }
  for (const [to, from] of moves) {
    const count = from.reduce((n, sid) => n + (dealsIn.get(sid) ?? 0), 0);
    await reallocateDeals(db, ctx, from, { id: to, kind: byId.get(to)!.kind }, count);
  }
  if (removed.length) await db.stage.deleteMany({ where: { pipeline_id: pipelineId, id: { in: removed.map((s) => s.id) } } });
}

/** Array order is board order: existing stages are updated where they changed, new ones created. */
async function writeStages(db: TenantTx, pipelineId: string, entries: Entry[], byId: Map<string, CurrentStage>) {
  const creates: { pipeline_id: string; name: string; color: string; position: number }[] = [];
  for (const [position, e] of entries.entries()) {
    if (e.id) {
      const before = byId.get(e.id)!;
      const data: Prisma.StageUpdateInput = {};
      if (before.position !== position) data.position = position;
      if (before.name !== e.name) data.name = e.name;
      if (e.color !== undefined) data.color = e.color;
      if (Object.keys(data).length) await db.stage.update({ where: { id: e.id }, data, select: { id: true } });
    } else {
      creates.push({ pipeline_id: pipelineId, name: e.name, color: e.color ?? DEFAULT_STAGE_COLOR, position });
    }
  }
  if (creates.length) await db.stage.createMany({ data: creates });
}
