// Pipeline groups: an organisation's top-level layout, positions 0..n-1 under the layout lock.
import { AppError, conflict, notFound, constraintViolation } from '../../errors.js';
import type { Context } from '../../context/context.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { requiredText } from '../common/validate.js';
import { BY_POSITION, compactGroups, layoutTransaction, moveTo, writePositions } from './positions.js';
import { checkPosition, NAME_MAX } from './validate.js';
import type { Selection } from '../common/types.js';

export function listGroups(ctx: Context, query: Selection = {}) {
  return ctx.db.pipelineGroup.findMany({ ...query, orderBy: BY_POSITION });
}

export async function createGroup(ctx: Context, input: { name: string }, query: Selection = {}) {
  const name = requiredText('name', input.name, NAME_MAX);
  const id = await layoutTransaction(ctx, async (db) => (await insertGroup(db, name)).id);
  return ctx.db.pipelineGroup.findUniqueOrThrow({ ...query, where: { id } });
}

/** Appends a group after the last one; the caller holds the layout lock. */
export async function insertGroup(db: TenantTx, name: string) {
  const { _max } = await db.pipelineGroup.aggregate({ _max: { position: true } });
  return db.pipelineGroup.create({ data: { name, position: (_max.position ?? -1) + 1 }, select: { id: true } });
}

/** 404 unless the group is the organisation's. */
export async function requireGroup(db: TenantTx, id: string) {
  if (!(await db.pipelineGroup.findUnique({ where: { id }, select: { id: true } }))) throw notFound('Grupo');
}

export async function updateGroup(ctx: Context, id: string, input: { name: string; position?: number | null }, query: Selection = {}) {
  const name = requiredText('name', input.name, NAME_MAX);
  checkPosition(input.position);
  await layoutTransaction(ctx, async (db) => {
    await requireGroup(db, id);
    await db.pipelineGroup.update({ where: { id }, data: { name }, select: { id: true } });
    if (input.position != null) {
      // Compacted first, so each group's index is its stored position.
      const groups = (await compactGroups(db)).map((g, i) => ({ id: g.id, position: i }));
      await writePositions(db, 'pipelineGroup', moveTo(groups, id, input.position));
    }
  });
  return ctx.db.pipelineGroup.findUniqueOrThrow({ ...query, where: { id } });
}

export async function deleteGroup(ctx: Context, id: string) {
  try {
    await layoutTransaction(ctx, async (db) => {
      await requireGroup(db, id);
      const pipelineCount = await db.pipeline.count({ where: { group_id: id } });
      if (pipelineCount > 0) {
        throw new AppError('CONFLICT', `O grupo possui ${pipelineCount} pipeline(s) e não pode ser excluído`, {
          pipeline_count: pipelineCount,
        });
      }
      await db.pipelineGroup.delete({ where: { id }, select: { id: true } });
      await compactGroups(db);
    });
  } catch (e) {
    // The database's own refusal while pipelines still point to the group.
    if (constraintViolation(e) === 'foreign_key') throw conflict('O grupo possui pipelines e não pode ser excluído');
    throw e;
  }
  return true;
}
