// Conversations and message history, always under the visibility policy (./visibility.ts), which the
// request's scoped client applies to every query here: a conversation the caller cannot see answers
// 404, and a lead's history holds only messages of conversations the caller can see. List pages read the conversation rows (last message and unread
// count are columns), never the messages.
import type { Context } from '../../context/context.js';
import { AppError, constraintViolation, notFound, invalidField, invalidParameter } from '../../errors.js';
import { isUuid } from '../common/validate.js';
import { Prisma, type Conversation as ConversationRow, type ConversationStatus } from '../../generated/prisma/client.js';
import type { VisibleSql } from '../../db/row-policy.js';
import { openSync, SyncedPage, SYNC_ORDER, type SyncArgs } from '../common/sync.js';
import { offsetWindow, type Selection } from '../common/types.js';
import { announceConversation, type ConversationChangeKind } from './live.js';
import { conversationData } from './shapes.js';
import { tenantIs } from '../../tenant-sql.js';
import { requireTenant } from '../../auth/viewer.js';
import { emit } from '../../events/emit.js';
import { checkAssignee } from './assignment.js';
import { queueRouting } from './routing-queue.js';

/** `limit` above this falls back to the default 20, like the other lists. */
export const CONVERSATIONS_MAX_LIMIT = 100;

export interface PageSource<W> {
  where: W;
  limit: number;
  offset: number;
}

export interface ConversationPageSource extends PageSource<Prisma.ConversationWhereInput> {
  /** A sync page (`updated_since`/`cursor`): rows by (updated_at, id). */
  sync?: SyncedPage<ConversationRow>;
}

export interface ConversationListArgs extends SyncArgs {
  limit?: number | null;
  offset?: number | null;
  lead_id?: string | null;
  status?: ConversationStatus | null;
  /** A user's id, `me` or `none`. */
  assignee_id?: string | null;
}

/** The assignee filter: a user id, null for `none`, undefined for no filter; `me` is the caller's user. */
function assigneeFilter(ctx: Context, value: string | null | undefined): string | null | undefined {
  if (value == null) return undefined;
  if (value === 'none') return null;
  if (value === 'me') return requireTenant(ctx.viewer).userId;
  if (!isUuid(value)) throw invalidParameter('assignee_id', 'deve ser o id de um usuário, me ou none');
  return value;
}

/**
 * The list's condition in SQL over `c` (conversations), for the JSON path: the same as `conversationPage`'s
 * `where` under the scoped client (`visible`: the raw statement's policy conditions).
 */
export function conversationListSql(ctx: Context, tenant: Prisma.Sql, visible: VisibleSql, args: ConversationListArgs): Prisma.Sql {
  const parts = [tenantIs(tenant, 'c'), visible.conversation(Prisma.sql`c`)];
  if (args.lead_id) parts.push(Prisma.sql`c.lead_id = ${args.lead_id}::uuid`);
  if (args.status) parts.push(Prisma.sql`c.status = ${args.status}::"ConversationStatus"`);
  const assignee = assigneeFilter(ctx, args.assignee_id);
  if (assignee === null) parts.push(Prisma.sql`c.assignee_id IS NULL`);
  else if (assignee) parts.push(Prisma.sql`c.assignee_id = ${assignee}::uuid`);
  return Prisma.join(parts, ' AND ');
}

/** A sync page's pagination: the count covers the rows from this page on; `next` is the next page's cursor. */
export const syncPagination = (total: number, limit: number, next: string | null) => ({
  total,
  limit,
  offset: 0,
  has_more: next != null,
  next_cursor: next,
});

export async function conversationPage(ctx: Context, args: ConversationListArgs): Promise<ConversationPageSource> {
  const where: Prisma.ConversationWhereInput = {};
  if (args.lead_id) where.lead_id = args.lead_id;
  if (args.status) where.status = args.status;
  const assignee = assigneeFilter(ctx, args.assignee_id);
  if (assignee !== undefined) where.assignee_id = assignee;
  const window = offsetWindow(args.limit, args.offset, CONVERSATIONS_MAX_LIMIT);
  const sync = await openSync(ctx, 'conversations', args, window.limit);
  if (!sync) return { where, ...window };
  const read = (w: object, take: number | undefined, query: Selection) =>
    ctx.db.conversation.findMany({ ...query, where: { AND: [where, w as Prisma.ConversationWhereInput] }, orderBy: SYNC_ORDER, take });
  return { where, limit: window.limit, offset: 0, sync: new SyncedPage(sync, read) };
}

export async function getConversation(ctx: Context, id: string, query: Selection = {}) {
  const conversation = await ctx.db.conversation.findFirst({ ...query, where: { id } });
  if (!conversation) throw notFound('Conversa');
  return conversation;
}

export interface ConversationChanges {
  status?: ConversationStatus | null;
  department_id?: string | null;
  read?: boolean | null;
  assignee_id?: string | null;
}

/**
 * PUT /backend/conversations/{id}: status, department (null clears it), `read: true` zeroes unread_count,
 * `assignee_id` assigns (a user who sees the conversation; within their capacity unless the caller is an
 * owner or admin) or unassigns (null), with `conversation.assigned`. Capacity freed (archived,
 * reassigned) or a conversation back in a routed department's queue calls a routing pass.
 */
export async function updateConversation(ctx: Context, id: string, input: ConversationChanges, query: Selection = {}) {
  const viewer = requireTenant(ctx.viewer);
  const data: Prisma.ConversationUncheckedUpdateManyInput = {};
  if (input.status === null) throw invalidField('status', 'deve ser active ou archived');
  if (input.status) data.status = input.status;
  if (input.read === false || input.read === null) throw invalidField('read', 'aceita apenas true');
  if (input.read) data.unread_count = 0;
  if (input.department_id !== undefined) {
    if (input.department_id !== null && !(await ctx.db.department.findUnique({ where: { id: input.department_id }, select: { id: true } })))
      throw notFound('Departamento');
    data.department_id = input.department_id;
  }
  if (input.assignee_id !== undefined) data.assignee_id = input.assignee_id;
  if (!Object.keys(data).length) return getConversation(ctx, id, query);
  let assigned: { from: string | null; to: string | null } | null = null;
  await ctx.db.$transaction(async (tx) => {
    // The row as the caller sees it, locked: the assignment rules read what this change starts from.
    const [current] = await tx.$tenantQuery<{ assignee_id: string | null; department_id: string | null; waiting: boolean }[]>(
      (tenant, visible) => Prisma.sql`
      SELECT c.assignee_id::text AS assignee_id, c.department_id::text AS department_id, c.waiting_since IS NOT NULL AS waiting
      FROM conversations c WHERE ${tenantIs(tenant, 'c')} AND c.id = ${id}::uuid AND ${visible.conversation(Prisma.sql`c`)}
      FOR UPDATE OF c`,
    );
    if (!current) throw notFound('Conversa');
    const department = input.department_id !== undefined ? input.department_id : current.department_id;
    if (input.assignee_id && input.assignee_id !== current.assignee_id)
      await checkAssignee(tx, input.assignee_id, department, { pastCapacity: viewer.role !== 'operator' });
    try {
      // One statement: the visibility condition (the scoped client's) and the change cannot be separated by a membership change.
      const { count } = await tx.conversation.updateMany({ where: { id }, data });
      if (count === 0) throw notFound('Conversa');
    } catch (e) {
      if (constraintViolation(e) === 'unique') throw new AppError('CONFLICT', 'O lead já tem outra conversa aberta');
      throw e;
    }
    const assignee = input.assignee_id !== undefined ? input.assignee_id : current.assignee_id;
    if (assignee !== current.assignee_id) {
      assigned = { from: current.assignee_id, to: assignee };
      await emit(tx, 'conversation.assigned', { id, assignee_id: assignee, previous_assignee_id: current.assignee_id });
    }
    // Capacity freed: the previous assignee's, or the assignee's when it is archived.
    const freed = assignee !== current.assignee_id ? current.assignee_id : input.status === 'archived' ? assignee : null;
    if (freed) await queueRouting(tx, { userId: freed });
    // Unassigned and waiting where routing may place it now.
    if (!assignee && current.waiting && department && (assignee !== current.assignee_id || department !== current.department_id))
      await queueRouting(tx, { departmentId: department });
  });
  await announceUpdate(ctx, id, input, assigned !== null);
  // As it now is, even when the caller just handed it to a department it is not in (and no longer sees it).
  return ctx.db.$unrestricted().conversation.findUniqueOrThrow({ ...query, where: { id } });
}

/** The committed change, to `conversationUpdated`: one event per kind of change asked for, with the conversation as it now is. */
async function announceUpdate(ctx: Context, id: string, input: ConversationChanges, reassigned: boolean) {
  const kinds: ConversationChangeKind[] = [];
  if (input.department_id !== undefined) kinds.push('assigned');
  if (reassigned) kinds.push('assignee');
  if (input.status) kinds.push(input.status === 'archived' ? 'archived' : 'reopened');
  if (input.read) kinds.push('read');
  if (!kinds.length) return;
  // The change the caller was allowed to make, announced to whoever sees the conversation now.
  const conversation = await ctx.db.$unrestricted().conversation.findUnique({
    where: { id },
    include: {
      lead: { select: { id: true, name: true, phone: true, whatsapp_user_id: true, whatsapp_username: true } },
      assignee: { select: { id: true, name: true } },
    },
  });
  if (!conversation) return;
  const snapshot = conversationData(conversation, conversation.lead, conversation.assignee);
  announceConversation(
    ctx.config,
    ctx.db.$tenantId,
    kinds.map((kind) => ({ kind, conversation: snapshot })),
  );
}

/** GET /backend/leads/{id}/messages: the lead's messages in the conversations the caller sees. */
export async function leadMessages(
  ctx: Context,
  leadId: string,
  args: { limit?: number | null; offset?: number | null },
): Promise<PageSource<Prisma.MessageWhereInput>> {
  if (!(await ctx.db.lead.findUnique({ where: { id: leadId }, select: { id: true } }))) throw notFound('Lead');
  return { where: { lead_id: leadId }, ...offsetWindow(args.limit, args.offset) };
}
