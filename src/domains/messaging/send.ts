// POST /backend/messages/send. In one transaction: the lead (404), its phone (must be able to receive
// messages) or else its WhatsApp user id (neither: 400 INVALID_PHONE), the channel (explicit, else
// the open conversation's, else the oldest active one; none usable: 502 CHANNEL_ERROR, nothing
// stored), on a WhatsApp Cloud channel an open 24-hour window (422 WINDOW_CLOSED, window.ts), the open
// conversation (created if none, with the channel's department), the message stored
// `pending` and a `messages.deliver` job. The provider is called by the job, never by the request.
// The steps media messages share (send-media.ts) are exported from here.
import type { Context } from '../../context/context.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { AppError, notFound, invalidField } from '../../errors.js';
import type { Channel, Conversation, Lead, Message } from '../../generated/prisma/client.js';
import type { ConversationLeadRow } from './shapes.js';
import { enqueue } from '../../jobs/enqueue.js';
import { DELIVER_QUEUE, type DeliverPayload } from './deliver.js';
import { canReceiveMessages } from '../common/phone.js';
import { appendMessage, findOpenConversation, openConversation } from './store.js';
import { messageText } from './text.js';
import { assertWindowOpen } from './window.js';
import { requireTenant } from '../../auth/viewer.js';

export interface SendInput {
  lead_id: string;
  content: string;
  type?: string | null;
  channel_id?: string | null;
}

/** The channel named, else the conversation's, else the oldest active one; 502 when none is usable. */
export async function chooseChannel(
  tx: Pick<TenantTx, 'channel'>,
  explicit: string | null | undefined,
  conversationChannel?: string | null,
): Promise<Channel> {
  const channel = explicit
    ? await tx.channel.findUnique({ where: { id: explicit } })
    : conversationChannel
      ? await tx.channel.findUnique({ where: { id: conversationChannel } })
      : await tx.channel.findFirst({ where: { active: true }, orderBy: [{ created_at: 'asc' }, { id: 'asc' }] });
  if (!channel)
    throw new AppError('CHANNEL_ERROR', explicit ? 'Canal não encontrado nesta organização' : 'Nenhum canal ativo para enviar a mensagem');
  if (!channel.active) throw new AppError('CHANNEL_ERROR', 'O canal está inativo');
  return channel;
}

/** The lead's open conversation, if any; 404 when the sender cannot see it (nothing may be written into it). */
export async function visibleOpenConversation(tx: TenantTx, leadId: string): Promise<Conversation | null> {
  const open = await findOpenConversation(tx, leadId);
  if (open && !open.visible) throw notFound('Conversa');
  return open;
}

/**
 * The conversation a sent message goes into: the open one, or a new one with the channel's department,
 * which must be visible to the sender too (404 otherwise, and the caller's transaction rolls back).
 */
export async function conversationToWrite(
  tx: TenantTx,
  lead: ConversationLeadRow,
  open: Conversation | null,
  channel: Channel,
): Promise<Conversation> {
  if (open) return open;
  const conversation = await openConversation(tx, lead, { channel_id: channel.id, department_id: channel.department_id });
  // Another request may have opened one meanwhile: whichever it is, the sender must see it.
  if (!conversation.visible) throw notFound('Conversa');
  return conversation;
}

/** 400 INVALID_PHONE unless the lead has a phone able to receive messages, or else a WhatsApp user id. */
export function assertReachable(lead: Pick<Lead, 'phone' | 'whatsapp_user_id'>): void {
  if (lead.phone ? !canReceiveMessages(lead.phone) : !lead.whatsapp_user_id)
    throw new AppError(
      'INVALID_PHONE',
      lead.phone ? 'O telefone do lead não é um número que possa receber mensagens' : 'O lead não tem telefone nem whatsapp_user_id',
    );
}

/** Queues the delivery of a pending message, in the transaction that stored it. */
export async function queueDelivery(tx: TenantTx, message: Pick<Message, 'id'>): Promise<void> {
  const payload: DeliverPayload = { tenant_id: tx.$tenantId, message_id: message.id };
  await enqueue(tx, DELIVER_QUEUE, payload);
}

export async function sendMessage(ctx: Context, input: SendInput) {
  requireTenant(ctx.viewer);
  const content = messageText('content', input.content);
  const type = input.type ?? 'text';
  if (type !== 'text') throw invalidField('type', 'aceita apenas text');
  return ctx.db.$transaction(async (tx) => {
    const lead = await tx.lead.findUnique({ where: { id: input.lead_id } });
    if (!lead) throw notFound('Lead');
    assertReachable(lead);
    const open = await visibleOpenConversation(tx, lead.id);
    const channel = await chooseChannel(tx, input.channel_id, open?.channel_id);
    assertWindowOpen(channel, open);
    const conversation = await conversationToWrite(tx, lead, open, channel);
    const message = await appendMessage(tx, ctx.config, conversation, {
      role: 'assistant',
      status: 'pending',
      type,
      content,
      channel_id: channel.id,
      answers: true,
    });
    await queueDelivery(tx, message);
    return message;
  });
}
