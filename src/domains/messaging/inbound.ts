// An inbound message (decisions.md "Operations the spec does not show": POST /channels/{id}/inbound;
// and the WhatsApp Cloud webhook): in one transaction the lead is found or created by phone, the open
// conversation found or created with the channel's department, the message stored with role `user`,
// the conversation's unread count and last message updated, and `message.received` emitted. An
// operator's key reports only into conversations the operator sees (404 otherwise, nothing stored).
import type { Config } from '../../config.js';
import type { Context } from '../../context/context.js';
import type { TenantDb } from '../../db/tenant-scope.js';
import { emit } from '../../events/emit.js';
import { notFound, invalidField } from '../../errors.js';
import type { Conversation, Lead, Message } from '../../generated/prisma/client.js';
import { announceMessage } from './live.js';
import { inboundPhone } from './phone.js';
import { messageData } from './shapes.js';
import { appendMessage, leadForPhone, lockChannel, openConversation } from './store.js';
import { messageText } from './text.js';
import { audienceOf, isConversationVisible, SYSTEM, type Audience } from './visibility.js';

export interface InboundInput {
  from: string;
  content: string;
  name?: string | null;
  /** The provider's type (`text`, `image`…); default `text`. */
  type?: string;
  /** The provider's id: a message the provider sends again is stored once. */
  providerMessageId?: string;
}

export interface InboundResult {
  lead: Lead;
  conversation: Conversation;
  message: Message;
}

/**
 * Records an inbound message on a channel of `db`'s organisation, for `audience` (the provider's webhook
 * acts for the whole organisation). Returns null when the provider's message id was stored already (a
 * webhook retried), having changed nothing.
 */
export async function receiveMessage(db: TenantDb, config: Config, channelId: string, input: InboundInput, audience: Audience = SYSTEM): Promise<InboundResult | null> {
  const phone = inboundPhone(input.from);
  const name = input.name?.trim().slice(0, 255) || phone;
  return db.$transaction(async (tx) => {
    const channel = await lockChannel(tx, channelId);
    if (!channel) throw notFound('Canal');
    if (input.providerMessageId && (await tx.message.findFirst({ where: { channel_id: channel.id, provider_message_id: input.providerMessageId }, select: { id: true } }))) {
      return null;
    }
    const lead = await leadForPhone(tx, phone, name);
    const open = await openConversation(tx, lead, { channel_id: channel.id, department_id: channel.department_id });
    if (!(await isConversationVisible(tx, audience, open.id))) throw notFound('Conversa');
    const message = await appendMessage(tx, config, open, {
      role: 'user',
      status: 'received',
      type: input.type ?? 'text',
      content: input.content,
      channel_id: channel.id,
      provider_message_id: input.providerMessageId,
    });
    await emit(tx, 'message.received', messageData(message, config));
    const conversation = await tx.conversation.findUniqueOrThrow({ where: { id: open.id } });
    return { lead, conversation, message };
  });
}

/** POST /backend/channels/{id}/inbound: an integration reports a message (any key of the organisation). */
export async function receiveInbound(ctx: Context, channelId: string, input: { from: string; content: string; name?: string | null }): Promise<InboundResult> {
  const audience = audienceOf(ctx.viewer);
  if (input.name != null && input.name.length > 255) throw invalidField('name', 'aceita no máximo 255 caracteres');
  const result = (await receiveMessage(ctx.db, ctx.config, channelId, { from: input.from, content: messageText('content', input.content), name: input.name }, audience))!;
  announceMessage(ctx.config, ctx.db.$tenantId, result.message.id);
  return result;
}
