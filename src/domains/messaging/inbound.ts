// An inbound message (POST /channels/{id}/inbound and the WhatsApp Cloud webhook): in one transaction
// the lead is found by the sender's WhatsApp user id (BSUID), else by phone (any of its written forms),
// or created; what the lead found lacks of the BSUID, the phone and the username is filled in (with
// `lead.updated`), unless another lead holds that phone (the message stays with the BSUID's lead:
// merging is the organisation's choice); the open
// conversation found or created with the channel's department, the message stored with role `user`,
// the conversation's unread count and last message updated, and `message.received` emitted (with
// `lead.created` and `conversation.created` when they are new). An operator's key reports only into
// conversations the operator sees (404 otherwise, nothing stored).
//
// Two statements between BEGIN and COMMIT (inbound-sql.ts), whether the sender is new or known: one
// that locks and reads, one that writes. Ids and the transaction's time are known before the write, so
// the events' data and the answer are built here from what the transaction read and returned (the
// write adds the new rows' updated_at, the database's clock), never read again.
import { randomUUID } from 'node:crypto';
import type { Config } from '../../config.js';
import type { Context } from '../../context/context.js';
import type { TenantDb, TenantTx } from '../../db/tenant-scope.js';
import type { EventInput } from '../../events/emit.js';
import { constraintViolation, notFound, invalidField } from '../../errors.js';
import type { Conversation, Lead, LeadStatus, Message, Tag } from '../../generated/prisma/client.js';
import { leadData, recordLeadUpdated } from '../leads/events.js';
import { tagsByLead } from '../leads/loaders.js';
import { findTargets, storeMessage, type JsonStamped, type Targets } from './inbound-sql.js';
import { announceConversationOnCommit, announceMessageOnCommit } from './live.js';
import { inboundPhone, phoneForms, whatsAppUserId, whatsAppUsername } from '../common/phone.js';
import { conversationData, messageData } from './shapes.js';
import { messageText } from './text.js';
import { requireTenant } from '../../auth/viewer.js';

export interface InboundInput {
  /** The sender's phone and WhatsApp user id (BSUID): one of them at least. */
  from?: string | null;
  userId?: string | null;
  username?: string | null;
  content: string;
  name?: string | null;
  /** The provider's type (`text`, `image`…); default `text`. */
  type?: string;
  /** The provider's id: a message the provider sends again is stored once. */
  providerMessageId?: string;
}

/** The lead as the answer shows it: the row with its status (its tags go to the request's loader). */
export type InboundLead = Lead & { status: LeadStatus | null };

export interface InboundResult {
  lead: InboundLead;
  /** The lead's tags, by name. */
  tags: Tag[];
  conversation: Conversation & { lead: InboundLead; assignee: { id: string; name: string } | null };
  message: Message;
}

/** Another request wrote the lead, the conversation or the provider's id meanwhile: run again. */
class Raced extends Error {}

const ATTEMPTS = 4;

/**
 * Records an inbound message on a channel of `db`'s organisation, as `db`'s caller may (the request's
 * scoped client; the provider's webhook has the system's, which sees every conversation), and announces it to live subscribers once committed. Returns null
 * when the provider's message id was stored already (a webhook retried), having changed nothing.
 */
export async function receiveMessage(db: TenantDb, config: Config, channelId: string, input: InboundInput): Promise<InboundResult | null> {
  const sender = senderOf(input);
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.$transaction((tx) => receiveOnce(tx, config, channelId, input, sender));
    } catch (e) {
      if (!(e instanceof Raced) || attempt === ATTEMPTS) throw e;
    }
  }
}

/** Who wrote, as the lead keeps it. */
export interface Sender {
  phone: string | null;
  userId: string | null;
  username: string | null;
  /** A new lead's name. */
  name: string;
}

/** The sender's identities, checked (400 on the field at fault); at least a phone or a user id. */
export function senderOf(input: Pick<InboundInput, 'from' | 'userId' | 'username' | 'name'>): Sender {
  const phone = input.from ? inboundPhone(input.from) : null;
  const userId = input.userId ? whatsAppUserId(input.userId, 'user_id') : null;
  if (!phone && !userId) throw invalidField('from', 'é obrigatório quando user_id não é dado');
  const username = whatsAppUsername(input.username);
  const name = input.name?.trim().slice(0, 255) || username || phone || userId!;
  return { phone, userId, username, name };
}

async function receiveOnce(
  tx: TenantTx,
  config: Config,
  channelId: string,
  input: InboundInput,
  sender: Sender,
): Promise<InboundResult | null> {
  const providerMessageId = input.providerMessageId ?? null;
  const targets = await findTargets(
    tx,
    channelId,
    { phones: sender.phone ? phoneForms(sender.phone) : [], userId: sender.userId },
    providerMessageId,
  );
  if (!targets) throw notFound('Canal');
  if (!targets.department_held) throw new Raced('the channel’s department changed');
  if (targets.duplicate) return null;
  if (!targets.visible) throw notFound('Conversa');

  const { now } = targets;
  const lead: InboundLead = targets.lead
    ? await filledLead(tx, knownLead(tx.$tenantId, targets.lead), sender, targets.phone_holder)
    : newLead(tx.$tenantId, randomUUID(), sender, now);
  const tags = targets.lead?.tags?.map((t) => stamped(t)) ?? [];
  const conversationId = targets.conversation_id ?? randomUUID();
  const message: Message = {
    id: randomUUID(),
    tenant_id: tx.$tenantId,
    conversation_id: conversationId,
    lead_id: lead.id,
    channel_id: targets.channel_id,
    role: 'user',
    type: input.type ?? 'text',
    content: input.content,
    status: 'received',
    provider_message_id: providerMessageId,
    error: null,
    media_key: null,
    media_mime_type: null,
    media_size: null,
    media_filename: null,
    template_id: null,
    template_parameters: [],
    created_at: now,
    updated_at: now,
  };

  const events: EventInput[] = [];
  if (!targets.lead) events.push({ type: 'lead.created', data: leadData(lead, null, []) });
  if (!targets.conversation_id)
    events.push({
      type: 'conversation.created',
      data: conversationData(openedConversation(tx.$tenantId, targets, conversationId, lead.id), lead, null),
    });
  events.push({ type: 'message.received', data: messageData(message, config) });

  const stored = await storeMessage(tx, {
    now,
    channelId: targets.channel_id,
    lead: { ...lead, isNew: !targets.lead },
    conversation: { id: conversationId, isNew: !targets.conversation_id, departmentId: targets.department_id },
    message: { id: message.id, type: message.type, content: message.content, providerMessageId },
    events,
  });
  if (!stored) throw new Raced('a concurrent write');
  if (stored.leadUpdatedAt) lead.updated_at = stored.leadUpdatedAt;
  const assignee = stored.conversation.assignee_id ? { id: stored.conversation.assignee_id, name: stored.assigneeName ?? '' } : null;
  // With its lead and assignee, so the answer reads neither again.
  const conversation = { ...stored.conversation, tenant_id: tx.$tenantId, lead, assignee };
  announceConversationOnCommit(tx, config, [{ kind: 'message', conversation: conversationData(conversation, lead, assignee) }]);
  announceMessageOnCommit(tx, config, message, conversation.department_id);
  return { lead, tags, conversation, message };
}

const stamped = <T extends JsonStamped>(row: T) => ({ ...row, created_at: new Date(row.created_at), updated_at: new Date(row.updated_at) });

function knownLead(tenantId: string, found: NonNullable<Targets['lead']>): InboundLead {
  const { status, tags: _, ...row } = found;
  return {
    ...row,
    tenant_id: tenantId,
    custom_fields: (row.custom_fields ?? {}) as Lead['custom_fields'],
    status: status && stamped(status),
  };
}

/**
 * The lead with what it lacked of the sender's identities stored (and `lead.updated`): the BSUID, the
 * username, and the phone unless `phoneHolder`, another lead, has it.
 */
async function filledLead(tx: TenantTx, lead: InboundLead, sender: Sender, phoneHolder: string | null): Promise<InboundLead> {
  const data: Partial<Pick<Lead, 'phone' | 'whatsapp_user_id' | 'whatsapp_username'>> = {};
  if (!lead.phone && sender.phone && !phoneHolder) data.phone = sender.phone;
  if (!lead.whatsapp_user_id && sender.userId) data.whatsapp_user_id = sender.userId;
  if (!lead.whatsapp_username && sender.username) data.whatsapp_username = sender.username;
  if (!Object.keys(data).length) return lead;
  let row: Lead;
  try {
    row = await tx.lead.update({ where: { id: lead.id }, data });
  } catch (e) {
    // Another request gave that phone or BSUID to a lead meanwhile.
    if (constraintViolation(e) === 'unique') throw new Raced('an identity was taken');
    throw e;
  }
  await recordLeadUpdated(tx, lead.id, lead.status_id);
  return { ...row, status: lead.status };
}

function newLead(tenantId: string, id: string, sender: Sender, now: Date): InboundLead {
  return {
    id,
    tenant_id: tenantId,
    name: sender.name,
    surname: null,
    phone: sender.phone,
    whatsapp_user_id: sender.userId,
    whatsapp_username: sender.username,
    email: null,
    company: null,
    avatar_url: null,
    status_id: null,
    custom_fields: {},
    created_at: now,
    updated_at: now,
    status: null,
  };
}

/** A new conversation as it is before its first message (what `conversation.created` carries). */
function openedConversation(tenantId: string, targets: Targets, id: string, leadId: string): Conversation {
  return {
    id,
    tenant_id: tenantId,
    lead_id: leadId,
    channel_id: targets.channel_id,
    department_id: targets.department_id,
    status: 'active',
    unread_count: 0,
    last_message_content: null,
    last_message_role: null,
    last_message_at: null,
    last_inbound_at: null,
    assignee_id: null,
    first_response_at: null,
    waiting_since: null,
    created_at: targets.now,
    updated_at: targets.now,
  };
}

/** POST /backend/channels/{id}/inbound: an integration reports a message (any key of the organisation). */
export async function receiveInbound(
  ctx: Context,
  channelId: string,
  input: { from?: string | null; user_id?: string | null; username?: string | null; content: string; name?: string | null },
): Promise<InboundResult> {
  requireTenant(ctx.viewer);
  if (input.name != null && input.name.length > 255) throw invalidField('name', 'aceita no máximo 255 caracteres');
  const result = (await receiveMessage(ctx.db, ctx.config, channelId, {
    from: input.from,
    userId: input.user_id,
    username: input.username,
    content: messageText('content', input.content),
    name: input.name,
  }))!;
  // The answer's Lead.tags come from the request's loader: what the transaction read.
  tagsByLead(ctx).clear(result.lead.id).prime(result.lead.id, result.tags);
  return result;
}
