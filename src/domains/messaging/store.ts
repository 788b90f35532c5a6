// The writes of outbound messages (send, send-media), each inside the caller's transaction: the lead of
// a phone, the lead's open conversation, and a message with the conversation's denormalised last
// message and unread count (an inbound message writes the same rows its own way: inbound-sql.ts).
// Lead and open conversation are created with INSERT … ON CONFLICT DO NOTHING on their unique keys
// ((tenant_id, phone); one `active` conversation per lead), then read back in a new
// statement: two requests racing for a new phone end with one lead and one open conversation.
import { Prisma, type Conversation, type Lead, type Message, type MessageRole, type MessageStatus } from '../../generated/prisma/client.js';
import { tenantIs, type TenantTx } from '../../db/tenant-scope.js';
import { emit } from '../../events/emit.js';
import { recordLeadCreated } from '../leads/events.js';
import type { Config } from '../../config.js';
import { announceConversationOnCommit, announceMessageOnCommit } from './live.js';
import { conversationData } from './shapes.js';

/** The lead with this phone, created (and `lead.created` emitted) when the phone is new. */
export async function leadForPhone(tx: TenantTx, phone: string, name: string): Promise<Lead> {
  const inserted = await tx.$tenantQuery<{ id: string }[]>(
    (tenant) => Prisma.sql`
    INSERT INTO leads (tenant_id, name, phone) VALUES (${tenant}, ${name}, ${phone})
    ON CONFLICT (tenant_id, phone) DO NOTHING RETURNING id::text AS id`,
  );
  if (inserted.length) {
    const lead = await tx.lead.findUniqueOrThrow({ where: { id: inserted[0].id } });
    // The same event, with the same data, as a lead created through the leads API.
    await recordLeadCreated(tx, lead.id);
    return lead;
  }
  return tx.lead.findFirstOrThrow({ where: { phone } });
}

export interface NewConversation {
  channel_id: string | null;
  department_id: string | null;
}

/** The lead's open conversation, or a new one (`conversation.created`) with these defaults. */
export async function openConversation(
  tx: TenantTx,
  lead: Pick<Lead, 'id' | 'name' | 'phone'>,
  defaults: NewConversation,
): Promise<Conversation> {
  // The conflicting open conversation can be archived between the two statements: then try again.
  for (let attempt = 0; attempt < 3; attempt++) {
    const inserted = await tx.$tenantQuery<{ id: string }[]>(
      (tenant) => Prisma.sql`
      INSERT INTO conversations (tenant_id, lead_id, channel_id, department_id)
      VALUES (${tenant}, ${lead.id}::uuid, ${defaults.channel_id}::uuid, ${defaults.department_id}::uuid)
      ON CONFLICT (tenant_id, lead_id) WHERE status = 'active' DO NOTHING RETURNING id::text AS id`,
    );
    if (inserted.length) {
      const conversation = await tx.conversation.findUniqueOrThrow({ where: { id: inserted[0].id } });
      await emit(tx, 'conversation.created', conversationData(conversation, lead));
      return conversation;
    }
    const open = await tx.conversation.findFirst({ where: { lead_id: lead.id, status: 'active' } });
    if (open) return open;
  }
  throw new Error('openConversation: the open conversation kept changing');
}

export async function findOpenConversation(tx: Pick<TenantTx, 'conversation'>, leadId: string): Promise<Conversation | null> {
  return tx.conversation.findFirst({ where: { lead_id: leadId, status: 'active' } });
}

export interface NewMessage {
  role: MessageRole;
  status: MessageStatus;
  content: string;
  type: string;
  channel_id: string | null;
  provider_message_id?: string | null;
  /** A media message's file, already in storage. */
  media?: MessageMedia;
}

export interface MessageMedia {
  key: string;
  mimeType: string;
  size: number;
  filename: string | null;
}

/**
 * Stores a message in the conversation and updates the conversation row in the same transaction: the
 * last message (unless a newer one is there already) and, for inbound messages, the unread count. A
 * sent message never resets the unread count. The conversation as the statement left it is announced
 * to `conversationUpdated`, and the message to `messageAdded`, once the transaction commits.
 */
export async function appendMessage(
  tx: TenantTx,
  config: Config,
  conversation: Pick<Conversation, 'id' | 'lead_id'>,
  input: NewMessage,
): Promise<Message> {
  const message = await tx.message.create({
    data: {
      conversation_id: conversation.id,
      lead_id: conversation.lead_id,
      channel_id: input.channel_id,
      role: input.role,
      type: input.type,
      content: input.content,
      status: input.status,
      provider_message_id: input.provider_message_id ?? null,
      ...(input.media
        ? {
            media_key: input.media.key,
            media_mime_type: input.media.mimeType,
            media_size: input.media.size,
            media_filename: input.media.filename,
          }
        : {}),
    },
  });
  const unread = input.role === 'user' ? 1 : 0;
  const [row] = await tx.$tenantQuery<(Conversation & { lead_name: string; lead_phone: string })[]>(
    (tenant) => Prisma.sql`
    UPDATE conversations c SET
      unread_count = c.unread_count + ${unread}::int,
      last_message_content = CASE WHEN c.last_message_at IS NULL OR c.last_message_at <= ${message.created_at} THEN ${message.content} ELSE c.last_message_content END,
      last_message_role = CASE WHEN c.last_message_at IS NULL OR c.last_message_at <= ${message.created_at} THEN ${message.role}::"MessageRole" ELSE c.last_message_role END,
      last_message_at = GREATEST(c.last_message_at, ${message.created_at}),
      updated_at = now()
    FROM leads l
    WHERE ${tenantIs(tenant, 'c')} AND c.id = ${conversation.id}::uuid AND l.tenant_id = c.tenant_id AND l.id = c.lead_id
    RETURNING c.id::text AS id, c.lead_id::text AS lead_id, c.channel_id::text AS channel_id, c.department_id::text AS department_id,
      c.status::text AS status, c.unread_count, c.last_message_content, c.last_message_role::text AS last_message_role,
      c.last_message_at, c.created_at, c.updated_at, l.name AS lead_name, l.phone AS lead_phone`,
  );
  if (row) {
    const lead = { id: row.lead_id, name: row.lead_name, phone: row.lead_phone };
    announceConversationOnCommit(tx, config, [{ kind: 'message', conversation: conversationData(row, lead) }]);
    announceMessageOnCommit(tx, config, message, row.department_id);
  }
  return message;
}
