// Conversations and message history, always through the visibility policy (./visibility.ts): a
// conversation the caller cannot see answers 404, and a lead's history holds only messages of
// conversations the caller can see. List pages read the conversation rows (last message and unread
// count are columns), never the messages.
import type { Context } from '../../context/context.js';
import { AppError, constraintViolation, notFound, invalidField } from '../../errors.js';
import type { ConversationStatus, Prisma } from '../../generated/prisma/client.js';
import { offsetWindow, type Selection } from '../common/types.js';
import { announceConversation, type ConversationChangeKind } from './live.js';
import { conversationData } from './shapes.js';
import { audienceOf, conversationWhere, messageWhere } from './visibility.js';

/** `limit` above this falls back to the default 20, like the other lists. */
export const CONVERSATIONS_MAX_LIMIT = 100;

export interface PageSource<W> {
  where: W;
  limit: number;
  offset: number;
}

export function conversationPage(
  ctx: Context,
  args: { limit?: number | null; offset?: number | null; lead_id?: string | null; status?: ConversationStatus | null },
): PageSource<Prisma.ConversationWhereInput> {
  const visible = conversationWhere(audienceOf(ctx.viewer));
  const filters: Prisma.ConversationWhereInput = {};
  if (args.lead_id) filters.lead_id = args.lead_id;
  if (args.status) filters.status = args.status;
  return { where: { AND: [visible, filters] }, ...offsetWindow(args.limit, args.offset, CONVERSATIONS_MAX_LIMIT) };
}

export async function getConversation(ctx: Context, id: string, query: Selection = {}) {
  const conversation = await ctx.db.conversation.findFirst({ ...query, where: { AND: [{ id }, conversationWhere(audienceOf(ctx.viewer))] } });
  if (!conversation) throw notFound('Conversa');
  return conversation;
}

export interface ConversationChanges {
  status?: ConversationStatus | null;
  department_id?: string | null;
  read?: boolean | null;
}

/** PUT /backend/conversations/{id}: status, department (null clears it), `read: true` zeroes unread_count. */
export async function updateConversation(ctx: Context, id: string, input: ConversationChanges, query: Selection = {}) {
  const visible = conversationWhere(audienceOf(ctx.viewer));
  const data: Prisma.ConversationUncheckedUpdateManyInput = {};
  if (input.status === null) throw invalidField('status', 'deve ser active ou archived');
  if (input.status) data.status = input.status;
  if (input.read === false || input.read === null) throw invalidField('read', 'aceita apenas true');
  if (input.read) data.unread_count = 0;
  if (input.department_id !== undefined) {
    if (input.department_id !== null && !(await ctx.db.department.findUnique({ where: { id: input.department_id }, select: { id: true } }))) throw notFound('Departamento');
    data.department_id = input.department_id;
  }
  if (Object.keys(data).length) {
    try {
      // One statement: the visibility condition and the change cannot be separated by a membership change.
      const { count } = await ctx.db.conversation.updateMany({ where: { AND: [{ id }, visible] }, data });
      if (count === 0) throw notFound('Conversa');
    } catch (e) {
      if (constraintViolation(e) === 'unique') throw new AppError('CONFLICT', 'O lead já tem outra conversa aberta');
      throw e;
    }
    await announceUpdate(ctx, id, input);
    return ctx.db.conversation.findUniqueOrThrow({ ...query, where: { id } });
  }
  return getConversation(ctx, id, query);
}

/** The committed change, to `conversationUpdated`: one event per kind of change asked for, with the conversation as it now is. */
async function announceUpdate(ctx: Context, id: string, input: ConversationChanges) {
  const kinds: ConversationChangeKind[] = [];
  if (input.department_id !== undefined) kinds.push('assigned');
  if (input.status) kinds.push(input.status === 'archived' ? 'archived' : 'reopened');
  if (input.read) kinds.push('read');
  const conversation = await ctx.db.conversation.findUnique({ where: { id }, include: { lead: { select: { id: true, name: true, phone: true } } } });
  if (!conversation) return;
  const snapshot = conversationData(conversation, conversation.lead);
  announceConversation(ctx.config, ctx.db.$tenantId, kinds.map((kind) => ({ kind, conversation: snapshot })));
}

/** GET /backend/leads/{id}/messages: the lead's messages in the conversations the caller sees. */
export async function leadMessages(ctx: Context, leadId: string, args: { limit?: number | null; offset?: number | null }): Promise<PageSource<Prisma.MessageWhereInput>> {
  const audience = audienceOf(ctx.viewer);
  if (!(await ctx.db.lead.findUnique({ where: { id: leadId }, select: { id: true } }))) throw notFound('Lead');
  return { where: { AND: [{ lead_id: leadId }, messageWhere(audience)] }, ...offsetWindow(args.limit, args.offset) };
}
