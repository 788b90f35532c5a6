// The two statements of an inbound message (inbound.ts), each one round trip:
//   `findTargets` locks the channel and its department (FOR KEY SHARE: a deletion of either waits for
//   the message; a non-key change such as the department deletion's SET NULL on the channel does not,
//   so the locks can be taken in any order without a deadlock), locks the sender's lead (the one with
//   the BSUID, else the one with the phone in any of its forms; a lead deletion waits too), and reads what the write and the answer need: the lead with its status and
//   tags, its open conversation, whether the caller sees where the message goes, whether the
//   provider's id is stored already, and the transaction's time;
//   `storeMessage` writes everything else in one statement: the lead and the open conversation when
//   they are new (INSERT … ON CONFLICT DO NOTHING on their unique keys), the message, the
//   conversation's unread count and last message, the events and their dispatch jobs.
// A conflict (another request created the lead or the conversation, or stored the provider's id,
// after this transaction's first read) makes `storeMessage` write nothing or not the message: it
// answers null and the caller rolls back and runs the transaction again, which then finds them.
import { Prisma } from '../../generated/prisma/client.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { tenantIs } from '../../tenant-sql.js';
import { emitCtes, type EventInput } from '../../events/emit.js';
import { JOBS_CHANNEL } from '../../jobs/enqueue.js';
import { routeConversationsCte } from './routing-queue.js';

export interface Targets {
  channel_id: string;
  /** The channel's department, which a new conversation gets. */
  department_id: string | null;
  /** False when the channel's department changed or went away after this statement's snapshot: read again. */
  department_held: boolean;
  /** The transaction's time, to the column's precision: every row the message writes carries it. */
  now: Date;
  duplicate: boolean;
  lead: TargetLead | null;
  conversation_id: string | null;
  /** Whether the caller sees the open conversation, or else the new one (with the channel's department). */
  visible: boolean;
  /** The lead that has the sender's phone, if any (another than `lead` when the BSUID found that one). */
  phone_holder: string | null;
}

export interface TargetLead {
  id: string;
  name: string;
  surname: string | null;
  phone: string | null;
  whatsapp_user_id: string | null;
  whatsapp_username: string | null;
  email: string | null;
  company: string | null;
  avatar_url: string | null;
  status_id: string | null;
  custom_fields: unknown;
  created_at: Date;
  updated_at: Date;
  /** Timestamps as JSON text: the caller makes them Dates. */
  status: JsonStamped | null;
  tags: JsonStamped[] | null;
}

export interface JsonStamped {
  id: string;
  tenant_id: string;
  name: string;
  color: string;
  created_at: string;
  updated_at: string;
}

type TargetRow = Omit<Targets, 'lead'> & { [K in keyof TargetLead as `lead_${K}`]: TargetLead[K] | null };

const stampedJson = (
  alias: Prisma.Sql,
) => Prisma.sql`json_build_object('id', ${alias}.id, 'tenant_id', ${alias}.tenant_id, 'name', ${alias}.name, 'color', ${alias}.color,
  'created_at', ${alias}.created_at, 'updated_at', ${alias}.updated_at)`;

/** Null when the channel is not the organisation's (or is gone). */
export async function findTargets(
  tx: TenantTx,
  channelId: string,
  sender: { phones: string[]; userId: string | null },
  providerMessageId: string | null,
): Promise<Targets | null> {
  const [canonical] = sender.phones;
  const byUserId = (tenant: Prisma.Sql) =>
    sender.userId
      ? Prisma.sql`(SELECT id FROM leads WHERE ${tenantIs(tenant)} AND whatsapp_user_id = ${sender.userId}::text)`
      : Prisma.sql`NULL::uuid`;
  // The stored form first, for a lead written before the ninth digit was added on write.
  const byPhone = (tenant: Prisma.Sql) =>
    canonical
      ? Prisma.sql`(SELECT id FROM leads WHERE ${tenantIs(tenant)} AND phone = ANY(${sender.phones}::text[]) ORDER BY phone = ${canonical}::text DESC LIMIT 1)`
      : Prisma.sql`NULL::uuid`;
  const [row] = await tx.$tenantQuery<TargetRow[]>(
    (tenant, visible) => Prisma.sql`
    WITH ch AS (SELECT tenant_id, id, department_id FROM channels WHERE ${tenantIs(tenant)} AND id = ${channelId}::uuid FOR KEY SHARE),
      dept AS (SELECT d.id FROM departments d JOIN ch ON d.tenant_id = ch.tenant_id AND d.id = ch.department_id FOR KEY SHARE OF d),
      holder AS (SELECT ${byPhone(tenant)} AS id),
      l AS (SELECT * FROM leads WHERE ${tenantIs(tenant)} AND id = COALESCE(${byUserId(tenant)}, (SELECT id FROM holder)) FOR KEY SHARE),
      c AS (SELECT c.tenant_id, c.id, c.department_id FROM conversations c JOIN l ON c.tenant_id = l.tenant_id AND c.lead_id = l.id WHERE c.status = 'active')
    SELECT ch.id::text AS channel_id, ch.department_id::text AS department_id,
      (ch.department_id IS NULL OR EXISTS (SELECT 1 FROM dept)) AS department_held,
      now()::timestamptz(3) AS now,
      ${providerMessageId === null ? Prisma.sql`FALSE` : Prisma.sql`EXISTS (SELECT 1 FROM messages m WHERE m.tenant_id = ch.tenant_id AND m.channel_id = ch.id AND m.provider_message_id = ${providerMessageId}::text)`} AS duplicate,
      (SELECT id::text FROM holder) AS phone_holder,
      l.id::text AS lead_id, l.name AS lead_name, l.surname AS lead_surname, l.phone AS lead_phone,
      l.whatsapp_user_id AS lead_whatsapp_user_id, l.whatsapp_username AS lead_whatsapp_username, l.email AS lead_email, l.company AS lead_company,
      l.avatar_url AS lead_avatar_url, l.status_id::text AS lead_status_id, l.custom_fields AS lead_custom_fields,
      l.created_at AS lead_created_at, l.updated_at AS lead_updated_at,
      (SELECT ${stampedJson(Prisma.sql`s`)} FROM lead_statuses s WHERE s.tenant_id = l.tenant_id AND s.id = l.status_id) AS lead_status,
      (SELECT json_agg(${stampedJson(Prisma.sql`t`)} ORDER BY t.name, t.id)
       FROM lead_tags lt JOIN tags t ON t.tenant_id = lt.tenant_id AND t.id = lt.tag_id WHERE lt.tenant_id = l.tenant_id AND lt.lead_id = l.id) AS lead_tags,
      c.id::text AS conversation_id,
      CASE WHEN c.id IS NULL THEN ${visible.conversation(Prisma.sql`ch`)} ELSE ${visible.conversation(Prisma.sql`c`)} END AS visible
    FROM ch LEFT JOIN l ON TRUE LEFT JOIN c ON TRUE`,
  );
  if (!row) return null;
  const { channel_id, department_id, department_held, now, duplicate, conversation_id, visible, phone_holder } = row;
  const lead = row.lead_id
    ? {
        id: row.lead_id,
        name: row.lead_name!,
        surname: row.lead_surname,
        phone: row.lead_phone,
        whatsapp_user_id: row.lead_whatsapp_user_id,
        whatsapp_username: row.lead_whatsapp_username,
        email: row.lead_email,
        company: row.lead_company,
        avatar_url: row.lead_avatar_url,
        status_id: row.lead_status_id,
        custom_fields: row.lead_custom_fields,
        created_at: row.lead_created_at!,
        updated_at: row.lead_updated_at!,
        status: row.lead_status,
        tags: row.lead_tags,
      }
    : null;
  return { channel_id, department_id, department_held, now, duplicate, lead, conversation_id, visible, phone_holder };
}

export interface MessageToStore {
  now: Date;
  channelId: string;
  lead: {
    id: string;
    name: string;
    phone: string | null;
    whatsapp_user_id: string | null;
    whatsapp_username: string | null;
    isNew: boolean;
  };
  /** The open conversation, or a new one (with this department). */
  conversation: { id: string; isNew: boolean; departmentId: string | null };
  message: { id: string; type: string; content: string; providerMessageId: string | null };
  events: EventInput[];
}

/** The conversation row as the statement left it. */
export interface StoredConversation {
  id: string;
  lead_id: string;
  channel_id: string | null;
  department_id: string | null;
  status: 'active' | 'archived';
  unread_count: number;
  last_message_content: string | null;
  last_message_role: 'user' | 'assistant' | null;
  last_message_at: Date | null;
  last_inbound_at: Date | null;
  assignee_id: string | null;
  first_response_at: Date | null;
  waiting_since: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** A timestamptz as JavaScript's toISOString writes it (the events' JSON). */
const isoSql = (value: Prisma.Sql) => Prisma.sql`to_char(${value} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

export interface Stored {
  conversation: StoredConversation;
  /** Its assignee's name, when it has one. */
  assigneeName: string | null;
  /** A new lead's updated_at (the database's clock at its insert). */
  leadUpdatedAt: Date | null;
}

/** The conversation as the message left it; null when a conflict kept the message from being stored. */
export async function storeMessage(tx: TenantTx, input: MessageToStore): Promise<Stored | null> {
  const { lead, conversation, message } = input;
  const now = input.now.toISOString();
  const [row] = await tx.$tenantQuery<
    (StoredConversation & { stored: boolean; lead_updated_at: Date | null; assignee_name: string | null; notified: string })[]
  >((tenant) => {
    const newLead = Prisma.sql`
      new_lead AS (
        INSERT INTO leads (tenant_id, id, name, phone, whatsapp_user_id, whatsapp_username, created_at, updated_at)
        VALUES (${tenant}, ${lead.id}::uuid, ${lead.name}::text, ${lead.phone}::text, ${lead.whatsapp_user_id}::text, ${lead.whatsapp_username}::text, ${now}::timestamptz, ${now}::timestamptz)
        ON CONFLICT DO NOTHING
        RETURNING id, updated_at),`;
    // A new conversation starts with the message as its last one and one unread message.
    const newConversation = Prisma.sql`
      conv AS (
        INSERT INTO conversations (tenant_id, id, lead_id, channel_id, department_id, unread_count, last_message_content, last_message_role, last_message_at, last_inbound_at, waiting_since, created_at, updated_at)
        SELECT ${tenant}, ${conversation.id}::uuid, ${lead.id}::uuid, ${input.channelId}::uuid, ${conversation.departmentId}::uuid, 1, ${message.content}::text, 'user'::"MessageRole", ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
        ${lead.isNew ? Prisma.sql`FROM new_lead` : Prisma.empty}
        ON CONFLICT (tenant_id, lead_id) WHERE status = 'active' DO NOTHING
        RETURNING *),`;
    const insertMessage = (from: Prisma.Sql) => Prisma.sql`
      m AS (
        INSERT INTO messages (tenant_id, id, conversation_id, lead_id, channel_id, role, type, content, status, provider_message_id, created_at, updated_at)
        SELECT ${tenant}, ${message.id}::uuid, ${conversation.id}::uuid, ${lead.id}::uuid, ${input.channelId}::uuid, 'user'::"MessageRole", ${message.type}::text, ${message.content}::text, 'received'::"MessageStatus", ${message.providerMessageId}::text, ${now}::timestamptz, ${now}::timestamptz
        ${from}
        ON CONFLICT (tenant_id, channel_id, provider_message_id) DO NOTHING
        RETURNING id),`;
    // The open conversation: the message becomes its last one unless a newer one is there already, and
    // it waits for an answer since its oldest unanswered message (`before` reads the row as it was).
    const updateConversation = Prisma.sql`
      before AS (SELECT waiting_since FROM conversations WHERE ${tenantIs(tenant)} AND id = ${conversation.id}::uuid),
      conv AS (
        UPDATE conversations c SET
          unread_count = c.unread_count + 1,
          last_message_content = CASE WHEN c.last_message_at IS NULL OR c.last_message_at <= ${now}::timestamptz THEN ${message.content}::text ELSE c.last_message_content END,
          last_message_role = CASE WHEN c.last_message_at IS NULL OR c.last_message_at <= ${now}::timestamptz THEN 'user'::"MessageRole" ELSE c.last_message_role END,
          last_message_at = GREATEST(c.last_message_at, ${now}::timestamptz),
          last_inbound_at = GREATEST(c.last_inbound_at, ${now}::timestamptz),
          waiting_since = COALESCE(c.waiting_since, ${now}::timestamptz),
          updated_at = ${now}::timestamptz
        FROM m
        WHERE ${tenantIs(tenant, 'c')} AND c.id = ${conversation.id}::uuid
        RETURNING c.*),`;
    const writes = conversation.isNew
      ? Prisma.join([lead.isNew ? newLead : Prisma.empty, newConversation, insertMessage(Prisma.sql`FROM conv`)], '')
      : Prisma.join([insertMessage(Prisma.empty), updateConversation], '');
    // updated_at is the database's clock at the write (a trigger): the new rows' events get it here.
    const stampedAt = (table: string) =>
      Prisma.sql`jsonb_build_object('updated_at', ${isoSql(Prisma.sql`(SELECT updated_at FROM ${Prisma.raw(table)})`)})`;
    const finish = (data: Prisma.Sql, type: Prisma.Sql) =>
      !lead.isNew && !conversation.isNew
        ? data
        : Prisma.sql`CASE ${type}
      ${lead.isNew ? Prisma.sql`WHEN 'lead.created' THEN ${data} || ${stampedAt('new_lead')}` : Prisma.empty}
      ${conversation.isNew ? Prisma.sql`WHEN 'conversation.created' THEN ${data} || ${stampedAt('conv')}` : Prisma.empty}
      ELSE ${data} END`;
    // A conversation that starts waiting unassigned, in a department with routing, is routed (routing.ts).
    const entersQueue = conversation.isNew ? Prisma.sql`TRUE` : Prisma.sql`(SELECT waiting_since FROM before) IS NULL`;
    return Prisma.sql`
    WITH ${writes}
    ${routeConversationsCte('routed', Prisma.sql`(SELECT conv.tenant_id, conv.department_id, conv.assignee_id FROM conv WHERE ${entersQueue})`)},
    ${emitCtes(tenant, input.events, Prisma.sql`EXISTS (SELECT 1 FROM m)`, finish)}
    SELECT conv.id::text AS id, conv.lead_id::text AS lead_id, conv.channel_id::text AS channel_id, conv.department_id::text AS department_id,
      conv.status::text AS status, conv.unread_count, conv.last_message_content, conv.last_message_role::text AS last_message_role,
      conv.last_message_at, conv.last_inbound_at, conv.assignee_id::text AS assignee_id, conv.first_response_at, conv.waiting_since,
      conv.created_at, conv.updated_at,
      (SELECT u.name FROM users u WHERE u.tenant_id = conv.tenant_id AND u.id = conv.assignee_id) AS assignee_name,
      ${lead.isNew ? Prisma.sql`(SELECT updated_at FROM new_lead)` : Prisma.sql`NULL::timestamptz`} AS lead_updated_at,
      EXISTS (SELECT 1 FROM m) AS stored, pg_notify(${JOBS_CHANNEL}, ${tenant}::text)::text AS notified
    FROM conv`;
  });
  if (!row?.stored) return null;
  const { stored: _, notified: __, lead_updated_at, assignee_name, ...written } = row;
  return { conversation: written, assigneeName: assignee_name, leadUpdatedAt: lead_updated_at };
}
