// POST /backend/messages/send (decisions.md "Messaging and channels"). In one transaction: the lead
// (404), its phone (must be able to receive messages: 400 INVALID_PHONE), the channel (explicit, else
// the open conversation's, else the oldest active one; none usable: 502 CHANNEL_ERROR, nothing
// stored), the open conversation (created if none, with the channel's department), the message stored
// `pending` and a `messages.deliver` job. The provider is called by the job, never by the request.
import type { Context } from '../../context/context.js';
import { Prisma } from '../../generated/prisma/client.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { AppError, invalidInput, notFound } from '../../errors.js';
import { enqueue } from '../../jobs/enqueue.js';
import { DELIVER_QUEUE, type DeliverPayload } from './deliver.js';
import { announceMessage } from './live.js';
import { canReceiveMessages } from './phone.js';
import { appendMessage, findOpenConversation, openConversation } from './store.js';
import { messageText } from './text.js';
import { audienceOf, conversationSql, type Audience } from './visibility.js';

export interface SendInput {
  lead_id: string;
  content: string;
  type?: string | null;
  channel_id?: string | null;
}

/** One EXISTS statement with the policy in its SQL form. */
async function isVisible(tx: TenantTx, audience: Audience, conversationId: string) {
  const [row] = await tx.$tenantQuery<{ visible: boolean }[]>(
    (tenant) => Prisma.sql`
    SELECT EXISTS (SELECT 1 FROM conversations c WHERE c.tenant_id = ${tenant} AND c.id = ${conversationId}::uuid AND ${conversationSql(audience, Prisma.sql`c`)}) AS visible`,
  );
  return row.visible;
}

async function chooseChannel(tx: TenantTx, explicit: string | null | undefined, conversationChannel: string | null | undefined) {
  const channel = explicit
    ? await tx.channel.findUnique({ where: { id: explicit } })
    : conversationChannel
      ? await tx.channel.findUnique({ where: { id: conversationChannel } })
      : await tx.channel.findFirst({ where: { active: true }, orderBy: [{ created_at: 'asc' }, { id: 'asc' }] });
  if (!channel) throw new AppError('CHANNEL_ERROR', explicit ? 'Canal não encontrado nesta organização' : 'Nenhum canal ativo para enviar a mensagem');
  if (!channel.active) throw new AppError('CHANNEL_ERROR', 'O canal está inativo');
  return channel;
}

export async function sendMessage(ctx: Context, input: SendInput) {
  const audience = audienceOf(ctx.viewer);
  const content = messageText('content', input.content);
  const type = input.type ?? 'text';
  if (type !== 'text') throw invalidInput('O campo type aceita apenas text');
  const message = await ctx.db.$transaction(async (tx) => {
    const lead = await tx.lead.findUnique({ where: { id: input.lead_id } });
    if (!lead) throw notFound('Lead');
    if (!canReceiveMessages(lead.phone)) throw new AppError('INVALID_PHONE', 'O telefone do lead não é um número que possa receber mensagens');
    const open = await findOpenConversation(tx, lead.id);
    if (open && !(await isVisible(tx, audience, open.id))) throw notFound('Conversa');
    const channel = await chooseChannel(tx, input.channel_id, open?.channel_id);
    const conversation = open ?? (await openConversation(tx, lead, { channel_id: channel.id, department_id: channel.department_id }));
    // A new conversation (or one another request opened meanwhile) must be visible to the sender too.
    if (conversation !== open && !(await isVisible(tx, audience, conversation.id))) throw notFound('Conversa');
    const message = await appendMessage(tx, conversation, { role: 'assistant', status: 'pending', type, content, channel_id: channel.id });
    const payload: DeliverPayload = { tenant_id: tx.$tenantId, message_id: message.id };
    await enqueue(tx, DELIVER_QUEUE, payload);
    return message;
  });
  announceMessage(ctx.config, ctx.db.$tenantId, message.id);
  return message;
}
