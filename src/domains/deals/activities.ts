// A deal's todos (decisions.md: GET/POST /backend/pipeline/deals/{id}/activities,
// PUT/DELETE /backend/pipeline/activities/{id}). They feed pending_todos and overdue_todos.
import type { Prisma } from '../../generated/prisma/client.js';
import { notFound, invalidField } from '../../errors.js';
import type { Context } from '../../context/context.js';
import { requiredText } from '../common/validate.js';
import type { Selection } from '../common/types.js';

export interface ActivityInput {
  title?: string | null;
  due_at?: Date | null;
  done?: boolean | null;
}

function dueAt(value: Date | null | undefined): Date | null | undefined {
  if (value === undefined || value === null) return value;
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) throw invalidField('due_at', 'deve ser uma data ISO 8601');
  return value;
}

async function assertDeal(ctx: Context, dealId: string) {
  if (!(await ctx.db.deal.findUnique({ where: { id: dealId }, select: { id: true } }))) throw notFound('Negócio');
}

export async function listActivities(ctx: Context, dealId: string, query: Selection = {}) {
  await assertDeal(ctx, dealId);
  return ctx.db.activity.findMany({
    ...query,
    where: { deal_id: dealId },
    orderBy: [{ done: 'asc' }, { due_at: { sort: 'asc', nulls: 'last' } }, { created_at: 'asc' }, { id: 'asc' }],
  });
}

export async function createActivity(ctx: Context, dealId: string, input: ActivityInput, query: Selection = {}) {
  const title = requiredText('title', input.title, 500);
  const due = dueAt(input.due_at) ?? null;
  await assertDeal(ctx, dealId);
  return ctx.db.activity.create({ ...query, data: { deal_id: dealId, title, due_at: due, done: input.done ?? false } });
}

export async function updateActivity(ctx: Context, id: string, input: ActivityInput, query: Selection = {}) {
  const data: Prisma.ActivityUpdateManyMutationInput = {};
  if (input.title != null) data.title = requiredText('title', input.title, 500);
  if (input.due_at !== undefined) data.due_at = dueAt(input.due_at);
  if (input.done != null) data.done = input.done;
  const { count } = await ctx.db.activity.updateMany({ where: { id }, data });
  if (count === 0) throw notFound('Atividade');
  return ctx.db.activity.findUniqueOrThrow({ ...query, where: { id } });
}

export async function deleteActivity(ctx: Context, id: string) {
  const { count } = await ctx.db.activity.deleteMany({ where: { id } });
  if (count === 0) throw notFound('Atividade');
}
