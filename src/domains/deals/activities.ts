// A deal's todos (decisions.md: GET/POST /backend/pipeline/deals/{id}/activities,
// PUT/DELETE /backend/pipeline/activities/{id}). They feed pending_todos and overdue_todos.
import { touchDeal } from './service.js';
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
  // The deal shows its pending todos: a change of them is a change of the deal (sync).
  return ctx.db.$transaction(async (tx) => {
    const activity = await tx.activity.create({ ...query, data: { deal_id: dealId, title, due_at: due, done: input.done ?? false } });
    await touchDeal(tx, dealId);
    return activity;
  });
}

export async function updateActivity(ctx: Context, id: string, input: ActivityInput, query: Selection = {}) {
  const data: Prisma.ActivityUpdateManyMutationInput = {};
  if (input.title != null) data.title = requiredText('title', input.title, 500);
  if (input.due_at !== undefined) data.due_at = dueAt(input.due_at);
  if (input.done != null) data.done = input.done;
  return ctx.db.$transaction(async (tx) => {
    const { count } = await tx.activity.updateMany({ where: { id }, data });
    if (count === 0) throw notFound('Atividade');
    const { deal_id } = await tx.activity.findUniqueOrThrow({ where: { id }, select: { deal_id: true } });
    await touchDeal(tx, deal_id);
    return tx.activity.findUniqueOrThrow({ ...query, where: { id } });
  });
}

export async function deleteActivity(ctx: Context, id: string) {
  await ctx.db.$transaction(async (tx) => {
    const [activity] = await tx.activity.findMany({ where: { id }, select: { deal_id: true } });
    const { count } = await tx.activity.deleteMany({ where: { id } });
    if (count === 0 || !activity) throw notFound('Atividade');
    await touchDeal(tx, activity.deal_id);
  });
}
