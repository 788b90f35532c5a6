// An inbound message (decisions.md "Operations the spec does not show": POST /channels/{id}/inbound;
// and the WhatsApp Cloud webhook): in one transaction the lead is found or created by phone, the open
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
import { notFound, invalidField } from '../../errors.js';
import type { Conversation, Lead, LeadStatus, Message, Tag } from '../../generated/prisma/client.js';
import { leadData } from '../leads/events.js';
import { tagsByLead } from '../leads/loaders.js';
import { findTargets, storeMessage, type JsonStamped, type Targets } from './inbound-sql.js';
import { announceConversationOnCommit, announceMessageOnCommit } from './live.js';
import { inboundPhone } from './phone.js';
import { conversationData, messageData } from './shapes.js';
import { messageText } from './text.js';
import { requireTenant } from '../../auth/viewer.js';

export interface InboundInput {
  from: string;
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
  conversation: Conversation & { lead: InboundLead };
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
  const phone = inboundPhone(input.from);
  const name = input.name?.trim().slice(0, 255) || phone;
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.$transaction((tx) => receiveOnce(tx, config, channelId, { ...input, phone, name }));
    } catch (e) {
      if (!(e instanceof Raced) || attempt === ATTEMPTS) throw e;
    }
  }
}

async function receiveOnce(
  tx: TenantTx,
  config: Config,
  channelId: string,
  input: InboundInput & { phone: string; name: string },
): Promise<InboundResult | null> {
  const providerMessageId = input.providerMessageId ?? null;
  const targets = await findTargets(tx, channelId, input.phone, providerMessageId);
  if (!targets) throw notFound('Canal');
  if (!targets.department_held) throw new Raced('the channel’s department changed');
  if (targets.duplicate) return null;
  if (!targets.visible) throw notFound('Conversa');

  const { now } = targets;
  const lead: InboundLead = targets.lead
    ? knownLead(tx.$tenantId, targets.lead)
    : newLead(tx.$tenantId, randomUUID(), input.name, input.phone, now);
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
    created_at: now,
    updated_at: now,
  };

  const events: EventInput[] = [];
  if (!targets.lead) events.push({ type: 'lead.created', data: leadData(lead, null, []) });
  if (!targets.conversation_id)
    events.push({
      type: 'conversation.created',
      data: conversationData(openedConversation(tx.$tenantId, targets, conversationId, lead.id), lead),
    });
  events.push({ type: 'message.received', data: messageData(message, config) });

  const stored = await storeMessage(tx, {
    now,
    channelId: targets.channel_id,
    lead: { id: lead.id, name: lead.name, phone: lead.phone, isNew: !targets.lead },
    conversation: { id: conversationId, isNew: !targets.conversation_id, departmentId: targets.department_id },
    message: { id: message.id, type: message.type, content: message.content, providerMessageId },
    events,
  });
  if (!stored) throw new Raced('a concurrent write');
  if (stored.leadUpdatedAt) lead.updated_at = stored.leadUpdatedAt;
  const conversation = { ...stored.conversation, tenant_id: tx.$tenantId, lead };
  announceConversationOnCommit(tx, config, [{ kind: 'message', conversation: conversationData(conversation, lead) }]);
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

function newLead(tenantId: string, id: string, name: string, phone: string, now: Date): InboundLead {
  return {
    id,
    tenant_id: tenantId,
    name,
    surname: null,
    phone,
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
    created_at: targets.now,
    updated_at: targets.now,
  };
}

/** POST /backend/channels/{id}/inbound: an integration reports a message (any key of the organisation). */
export async function receiveInbound(
  ctx: Context,
  channelId: string,
  input: { from: string; content: string; name?: string | null },
): Promise<InboundResult> {
  requireTenant(ctx.viewer);
  if (input.name != null && input.name.length > 255) throw invalidField('name', 'aceita no máximo 255 caracteres');
  const result = (await receiveMessage(ctx.db, ctx.config, channelId, {
    from: input.from,
    content: messageText('content', input.content),
    name: input.name,
  }))!;
  // The answer's Lead.tags come from the request's loader: what the transaction read.
  tagsByLead(ctx).clear(result.lead.id).prime(result.lead.id, result.tags);
  return result;
}
