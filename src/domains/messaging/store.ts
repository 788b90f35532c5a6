// The writes of outbound messages (send, send-media), each inside the caller's transaction: the lead of
// a phone, the lead's open conversation, and a message with the conversation's denormalised last
// message and unread count (an inbound message writes the same rows its own way: inbound-sql.ts).
// Lead and open conversation are created with INSERT … ON CONFLICT DO NOTHING on their unique keys
// ((tenant_id, phone); one `active` conversation per lead), then read back in a new
// statement: two requests racing for a new phone end with one lead and one open conversation.
// The open conversation is read and written in SQL that also answers whether the caller sees it
// (`visible`, the scoped client's policy condition): one the caller cannot see is not hidden from these
// statements, since the caller must be refused (404), not given a second open conversation.
import { Prisma, type Conversation, type Lead, type Message, type MessageRole, type MessageStatus } from '../../generated/prisma/client.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { tenantIs } from '../../tenant-sql.js';
import type { VisibleSql } from '../../db/row-policy.js';
import { emit } from '../../events/emit.js';
import { recordLeadCreated } from '../leads/events.js';
import { phoneForms } from '../common/phone.js';
import type { Config } from '../../config.js';
import { announceConversationOnCommit, announceMessageOnCommit } from './live.js';
import { conversationData, type ConversationLeadRow } from './shapes.js';
import { routeConversationsCte } from './routing-queue.js';
import { notifyJobsSql } from '../../jobs/enqueue.js';

/** The lead with this phone (in any of its forms), created (and `lead.created` emitted) when the phone is new. */
export async function leadForPhone(tx: TenantTx, phone: string, name: string): Promise<Lead> {
  // Descending puts the stored form (with the ninth digit) before a row still in the short one.
  const byPhone = () => tx.lead.findFirst({ where: { phone: { in: phoneForms(phone) } }, orderBy: { phone: 'desc' } });
  const known = await byPhone();
  if (known) return known;
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
  return (await byPhone())!;
}

export interface NewConversation {
  channel_id: string | null;
  department_id: string | null;
}

/** A conversation row, with whether the caller sees it. */
export type SeenConversation = Conversation & { visible: boolean };

/** A conversations row aliased `c` as Prisma reads it, and whether the caller sees it. */
const seenConversation = (visible: VisibleSql) => Prisma.sql`c.tenant_id::text AS tenant_id, c.id::text AS id,
  c.lead_id::text AS lead_id, c.channel_id::text AS channel_id, c.department_id::text AS department_id, c.status::text AS status,
  c.unread_count, c.last_message_content, c.last_message_role::text AS last_message_role, c.last_message_at, c.last_inbound_at,
  c.assignee_id::text AS assignee_id, c.first_response_at, c.waiting_since, c.created_at, c.updated_at,
  ${visible.conversation(Prisma.sql`c`)} AS visible`;

/** The lead's open conversation, or a new one (`conversation.created`) with these defaults; either may be hidden from the caller. */
export async function openConversation(tx: TenantTx, lead: ConversationLeadRow, defaults: NewConversation): Promise<SeenConversation> {
  // The conflicting open conversation can be archived between the two statements: then try again.
  for (let attempt = 0; attempt < 3; attempt++) {
    // A new conversation in a department with routing is placed with an available member (routing.ts).
    const [inserted] = await tx.$tenantQuery<SeenConversation[]>(
      (tenant, visible) => Prisma.sql`
      WITH c AS (
        INSERT INTO conversations AS c (tenant_id, lead_id, channel_id, department_id)
        VALUES (${tenant}, ${lead.id}::uuid, ${defaults.channel_id}::uuid, ${defaults.department_id}::uuid)
        ON CONFLICT (tenant_id, lead_id) WHERE status = 'active' DO NOTHING RETURNING *),
      ${routeConversationsCte('routed', Prisma.sql`(SELECT id, tenant_id, department_id, assignee_id FROM c)`, true)}
      SELECT ${seenConversation(visible)}, ${notifyJobsSql(tenant)} FROM c`,
    );
    if (inserted) {
      const { notified: _, ...row } = inserted as SeenConversation & { notified?: string };
      await emit(tx, 'conversation.created', conversationData(row, lead, null));
      return row;
    }
    const open = await findOpenConversation(tx, lead.id);
    if (open) return open;
  }
  throw new Error('openConversation: the open conversation kept changing');
}

/** The lead's open conversation, whether or not the caller sees it (`visible` says). */
export async function findOpenConversation(tx: Pick<TenantTx, '$tenantQuery'>, leadId: string): Promise<SeenConversation | null> {
  const [open] = await tx.$tenantQuery<SeenConversation[]>(
    (tenant, visible) => Prisma.sql`
    SELECT ${seenConversation(visible)} FROM conversations c WHERE ${tenantIs(tenant, 'c')} AND c.lead_id = ${leadId}::uuid AND c.status = 'active'`,
  );
  return open ?? null;
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
  /** A template message's template and body values, in placeholder order. */
  template?: { id: string; parameters: string[] };
  /**
   * A send through the API (send, send-media, send-template) answers the customer: the conversation's
   * first response (after an inbound message) is now and it no longer waits. Cadence messages do not.
   */
  answers?: boolean;
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
      ...(input.template ? { template_id: input.template.id, template_parameters: input.template.parameters } : {}),
    },
  });
  const unread = input.role === 'user' ? 1 : 0;
  const answers = input.role === 'assistant' && input.answers === true;
  const [row] = await tx.$tenantQuery<
    (Conversation & {
      lead_name: string;
      lead_phone: string | null;
      lead_user_id: string | null;
      lead_username: string | null;
      assignee_name: string | null;
    })[]
  >(
    (tenant) => Prisma.sql`
    UPDATE conversations c SET
      unread_count = c.unread_count + ${unread}::int,
      last_message_content = CASE WHEN c.last_message_at IS NULL OR c.last_message_at <= ${message.created_at} THEN ${message.content} ELSE c.last_message_content END,
      last_message_role = CASE WHEN c.last_message_at IS NULL OR c.last_message_at <= ${message.created_at} THEN ${message.role}::"MessageRole" ELSE c.last_message_role END,
      last_message_at = GREATEST(c.last_message_at, ${message.created_at}),
      last_inbound_at = CASE WHEN ${message.role}::"MessageRole" = 'user' THEN GREATEST(c.last_inbound_at, ${message.created_at}) ELSE c.last_inbound_at END,
      first_response_at = CASE WHEN ${answers} AND c.last_inbound_at IS NOT NULL THEN COALESCE(c.first_response_at, ${message.created_at}) ELSE c.first_response_at END,
      waiting_since = CASE WHEN ${answers} THEN NULL WHEN ${message.role}::"MessageRole" = 'user' THEN COALESCE(c.waiting_since, ${message.created_at}) ELSE c.waiting_since END,
      updated_at = now()
    FROM leads l
    WHERE ${tenantIs(tenant, 'c')} AND c.id = ${conversation.id}::uuid AND l.tenant_id = c.tenant_id AND l.id = c.lead_id
    RETURNING c.id::text AS id, c.lead_id::text AS lead_id, c.channel_id::text AS channel_id, c.department_id::text AS department_id,
      c.status::text AS status, c.unread_count, c.last_message_content, c.last_message_role::text AS last_message_role,
      c.last_message_at, c.last_inbound_at, c.assignee_id::text AS assignee_id, c.first_response_at, c.waiting_since,
      c.created_at, c.updated_at, l.name AS lead_name, l.phone AS lead_phone,
      l.whatsapp_user_id AS lead_user_id, l.whatsapp_username AS lead_username,
      (SELECT u.name FROM users u WHERE u.tenant_id = c.tenant_id AND u.id = c.assignee_id) AS assignee_name`,
  );
  if (row) {
    const lead = {
      id: row.lead_id,
      name: row.lead_name,
      phone: row.lead_phone,
      whatsapp_user_id: row.lead_user_id,
      whatsapp_username: row.lead_username,
    };
    const assignee = row.assignee_id ? { id: row.assignee_id, name: row.assignee_name ?? '' } : null;
    announceConversationOnCommit(tx, config, [{ kind: 'message', conversation: conversationData(row, lead, assignee) }]);
    announceMessageOnCommit(tx, config, message, row.department_id);
  }
  return message;
}
