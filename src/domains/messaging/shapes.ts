// Event payloads (decisions.md: an event's `data` is the resource as its REST read returns it). These
// mirror the GraphQL types' REST shapes (./types.ts) for rows read inside the transaction that emits
// (and for the send-media answer, which is not a GraphQL field route); a lead's own events come from
// the leads domain (leads/events.ts).
import type { Config } from '../../config.js';
import type { Conversation, Lead, Message, User } from '../../generated/prisma/client.js';
import { mediaUrl } from '../uploads/media-url.js';
import { windowExpiresAt } from './window.js';

export function lastMessage(c: Pick<Conversation, 'last_message_content' | 'last_message_role' | 'last_message_at'>) {
  return c.last_message_at ? { content: c.last_message_content ?? '', role: c.last_message_role!, timestamp: c.last_message_at } : null;
}

/** What a conversation shows of its lead: who it is and how WhatsApp knows them. */
export type ConversationLeadRow = Pick<Lead, 'id' | 'name' | 'phone' | 'whatsapp_user_id' | 'whatsapp_username'>;

/** Who answers a conversation, as it shows them. */
export type AssigneeRow = Pick<User, 'id' | 'name'>;

export function conversationData(c: Conversation, lead: ConversationLeadRow, assignee: AssigneeRow | null) {
  return {
    id: c.id,
    lead: {
      id: lead.id,
      name: lead.name,
      phone: lead.phone,
      whatsapp_user_id: lead.whatsapp_user_id,
      whatsapp_username: lead.whatsapp_username,
    },
    last_message: lastMessage(c),
    unread_count: c.unread_count,
    window_expires_at: windowExpiresAt(c),
    status: c.status,
    department_id: c.department_id,
    channel_id: c.channel_id,
    assignee_id: c.assignee_id,
    assignee: c.assignee_id && assignee ? { id: assignee.id, name: assignee.name } : null,
    first_response_at: c.first_response_at,
    waiting_since: c.waiting_since,
    created_at: c.created_at,
    updated_at: c.updated_at,
  };
}

/** Where a media message's file is served (the public media proxy), or null for a text. */
export function messageMediaUrl(config: Pick<Config, 'publicBaseUrl'>, m: Pick<Message, 'media_key'>): string | null {
  return m.media_key ? mediaUrl(config, m.media_key) : null;
}

/** A message as its REST read returns it (the GraphQL `Message` type's fields). */
export function messageData(m: Message, config: Pick<Config, 'publicBaseUrl'>) {
  return {
    id: m.id,
    lead_id: m.lead_id,
    conversation_id: m.conversation_id,
    channel_id: m.channel_id,
    content: m.content,
    type: m.type,
    role: m.role,
    status: m.status,
    error: m.error,
    provider_message_id: m.provider_message_id,
    media_url: messageMediaUrl(config, m),
    template_id: m.template_id,
    timestamp: m.created_at,
  };
}
