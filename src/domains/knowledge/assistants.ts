// Assistants: the automated agents that consult the knowledge base. Everyone with knowledge.view reads
// them; owner and admin manage them. An assistant that still owns exclusive items cannot be deleted (409
// with item_count): deleting them would lose data, making them global would show them to every assistant.
import { Prisma } from '../../generated/prisma/client.js';
import { conflict, notFound } from '../../errors.js';
import type { Context } from '../../context/context.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { tenantIs } from '../../tenant-sql.js';
import type { Selection } from '../common/types.js';
import { optionalText, requiredText } from '../common/validate.js';

const NAME_MAX = 255;
const INSTRUCTIONS_MAX = 20_000;

export interface AssistantInput {
  name?: string | null;
  instructions?: string | null;
}

export const assistantNotFound = () => notFound('Assistente');

/** 404 unless `id` is an assistant of the organisation (read in the caller's transaction). */
export async function assertAssistantExists(db: TenantTx, id: string): Promise<void> {
  if (!(await db.assistant.findUnique({ where: { id }, select: { id: true } }))) throw assistantNotFound();
}

export function listAssistants(ctx: Context, query: Selection = {}) {
  return ctx.db.assistant.findMany({ ...query, orderBy: [{ created_at: 'asc' }, { id: 'asc' }] });
}

export async function getAssistant(ctx: Context, id: string, query: Selection = {}) {
  const assistant = await ctx.db.assistant.findUnique({ ...query, where: { id } });
  if (!assistant) throw assistantNotFound();
  return assistant;
}

export function createAssistant(ctx: Context, input: AssistantInput, query: Selection = {}) {
  const name = requiredText('name', input.name, NAME_MAX);
  const instructions = optionalText('instructions', input.instructions, INSTRUCTIONS_MAX) || null;
  return ctx.db.assistant.create({ ...query, data: { name, instructions } });
}

/** Partial update: an absent field is unchanged; `instructions: null` or "" clears them. */
export async function updateAssistant(ctx: Context, id: string, input: AssistantInput, query: Selection = {}) {
  const data: { name?: string; instructions?: string | null } = {};
  if (input.name !== undefined) data.name = requiredText('name', input.name, NAME_MAX);
  if (input.instructions !== undefined) data.instructions = optionalText('instructions', input.instructions, INSTRUCTIONS_MAX) || null;
  const { count } = await ctx.db.assistant.updateMany({ where: { id }, data });
  if (count === 0) throw assistantNotFound();
  return ctx.db.assistant.findUniqueOrThrow({ ...query, where: { id } });
}

export async function deleteAssistant(ctx: Context, id: string): Promise<void> {
  await ctx.db.$transaction(async (tx) => {
    // The row lock makes a concurrent write that points an item at this assistant (its foreign key check
    // locks the row too) either finish first, and be counted, or wait and then find no assistant.
    const locked = await tx.$tenantQuery<{ id: string }[]>(
      (tenant) => Prisma.sql`SELECT id FROM assistants WHERE ${tenantIs(tenant)} AND id = ${id}::uuid FOR UPDATE`,
    );
    if (!locked.length) throw assistantNotFound();
    const owned = await tx.knowledgeItem.count({ where: { assistant_id: id } });
    if (owned > 0) {
      throw conflict('O assistente possui itens de conhecimento exclusivos; exclua-os ou torne-os globais antes', { item_count: owned });
    }
    // Its exclusions go with it (ON DELETE CASCADE).
    await tx.assistant.delete({ where: { id }, select: { id: true } });
  });
}
