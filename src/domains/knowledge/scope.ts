// Who sees which item. A global item (assistant_id null) is seen by every assistant it does not exclude;
// an exclusive item only by its assistant. Exclusions exist only on global items: an item that becomes
// exclusive loses them, and the exclusion endpoints answer 409 for an exclusive item.
import { Prisma } from '../../generated/prisma/client.js';
import { conflict, constraintViolation, notFound, invalidField } from '../../errors.js';
import type { Context } from '../../context/context.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { tenantIs } from '../../tenant-sql.js';
import type { Selection } from '../common/types.js';
import { isUuid } from '../common/validate.js';
import { assistantNotFound } from './assistants.js';

export const itemNotFound = () => notFound('Item de conhecimento');

/** The items an assistant sees: global ones it is not excluded from, and its exclusive ones. */
export function visibleTo(assistantId: string): Prisma.KnowledgeItemWhereInput {
  return { OR: [{ assistant_id: assistantId }, { assistant_id: null, exclusions: { none: { assistant_id: assistantId } } }] };
}

/**
 * `assistant_id` as a create or update sends it (spec "Knowledge scope"): absent → undefined (unchanged),
 * "" or null → null (global), a UUID → that assistant (exclusive). Anything else is malformed (400).
 */
export function scopeArg(value: string | null | undefined): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === null || value === '') return null;
  if (!isUuid(value)) throw invalidField('assistant_id', 'deve ser um UUID, ou vazio para um item global');
  return value.toLowerCase();
}

/**
 * Locks the item's row for the rest of the transaction, so exclusion writes and scope changes of one item
 * run one after the other (the last whole list wins), and checks it is global.
 */
async function lockGlobalItem(db: TenantTx, id: string): Promise<void> {
  const rows = await db.$tenantQuery<{ assistant_id: string | null }[]>(
    (tenant) => Prisma.sql`SELECT assistant_id FROM knowledge_items WHERE ${tenantIs(tenant)} AND id = ${id}::uuid FOR UPDATE`,
  );
  if (!rows.length) throw itemNotFound();
  if (rows[0].assistant_id !== null) throw conflict('Exclusões só se aplicam a itens globais; este item é exclusivo de um assistente');
}

async function assertAssistantsExist(db: TenantTx, ids: string[]): Promise<void> {
  if (ids.length && (await db.assistant.count({ where: { id: { in: ids } } })) !== ids.length) throw assistantNotFound();
}

/** Runs an exclusion change on a locked global item; `change` tells whether the list changed. */
async function editExclusions(ctx: Context, id: string, change: (tx: TenantTx) => Promise<boolean>, query: Selection) {
  await ctx.db.$transaction(async (tx) => {
    await lockGlobalItem(tx, id);
    try {
      if (await change(tx)) await tx.knowledgeItem.updateMany({ where: { id }, data: { updated_at: new Date() } });
    } catch (e) {
      // An assistant deleted after it was checked.
      throw constraintViolation(e) === 'foreign_key' ? assistantNotFound() : e;
    }
  });
  return ctx.db.knowledgeItem.findUniqueOrThrow({ ...query, where: { id } });
}

/** Hides a global item from an assistant. Idempotent. */
export function addExclusion(ctx: Context, id: string, assistantId: string, query: Selection = {}) {
  return editExclusions(
    ctx,
    id,
    async (tx) => {
      await assertAssistantsExist(tx, [assistantId]);
      const { count } = await tx.knowledgeExclusion.createMany({
        data: [{ item_id: id, assistant_id: assistantId }],
        skipDuplicates: true,
      });
      return count > 0;
    },
    query,
  );
}

/** Shows a global item to an assistant again. Idempotent; the assistant must exist. */
export function removeExclusion(ctx: Context, id: string, assistantId: string, query: Selection = {}) {
  return editExclusions(
    ctx,
    id,
    async (tx) => {
      await assertAssistantsExist(tx, [assistantId]);
      const { count } = await tx.knowledgeExclusion.deleteMany({ where: { item_id: id, assistant_id: assistantId } });
      return count > 0;
    },
    query,
  );
}

/** Replaces the whole list; [] shows the item to every assistant. */
export function setExclusions(ctx: Context, id: string, assistantIds: string[], query: Selection = {}) {
  const ids = [...new Set(assistantIds.map((a) => a.toLowerCase()))];
  return editExclusions(
    ctx,
    id,
    async (tx) => {
      await assertAssistantsExist(tx, ids);
      const removed = await tx.knowledgeExclusion.deleteMany({ where: { item_id: id, assistant_id: { notIn: ids } } });
      const added = ids.length
        ? await tx.knowledgeExclusion.createMany({ data: ids.map((assistant_id) => ({ item_id: id, assistant_id })), skipDuplicates: true })
        : { count: 0 };
      return removed.count + added.count > 0;
    },
    query,
  );
}
