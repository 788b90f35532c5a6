// GraphQL types of messaging: departments and members, channels, conversations and messages.
// Graph-only edges carry GRAPH_ONLY so REST answers keep the spec's shapes.
import type { Prisma } from '../../generated/prisma/client.js';
import { builder, GRAPH_ONLY } from '../../schema/builder.js';
import { listCap, listCount } from '../../schema/list-bounds.js';
import { OffsetPagination, offsetPagination, SyncPagination } from '../common/types.js';
import { syncWhere } from '../common/sync.js';
import { Lead } from '../leads/types.js';
import { syncPagination, type ConversationPageSource, type PageSource } from './conversations.js';
import { MEMBERS_MAX, type DepartmentListSource } from './departments.js';
import type { InboundResult } from './inbound.js';
import type { ConversationChange, ConversationSnapshot } from './live.js';
import { lastMessage, messageMediaUrl } from './shapes.js';
import { windowExpiresAt } from './window.js';
import { MEDIA_TYPES } from './send-media.js';

export const RoutingEnum = builder.enumType('DepartmentRouting', {
  description:
    'How a department’s conversations get an assignee: `manual` (by hand only), `round_robin` (its online members in turn) or `balanced` (the online member with the fewest open conversations). New conversations and unassigned ones that get a message go to an online member under capacity at once; otherwise they wait, oldest first, for one to come online or free capacity.',
  values: { manual: { value: 'manual' }, round_robin: { value: 'round_robin' }, balanced: { value: 'balanced' } } as const,
});

export const Department = builder.prismaObject('Department', {
  description: 'A team of users. Operators see the conversations of their departments and those without a department.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    tenant_id: t.expose('tenant_id', { type: 'UUID', description: 'The organisation.' }),
    name: t.exposeString('name', { description: '1 to 100 characters, unique in the organisation.' }),
    description: t.exposeString('description', { nullable: true }),
    routing: t.expose('routing', { type: RoutingEnum }),
    member_count: t.relationCount('members', { description: 'Users in the department.' }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    updated_at: t.expose('updated_at', { type: 'DateTime' }),
  }),
});

export const DepartmentMember = builder.prismaObject('DepartmentMember', {
  description: 'A user’s membership of a department.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    department_id: t.expose('department_id', { type: 'UUID' }),
    user_id: t.expose('user_id', { type: 'UUID' }),
    user_name: t.string({ description: 'The user’s name.', select: { user: { select: { name: true } } }, resolve: (m) => m.user.name }),
    user_email: t.string({ description: 'The user’s email.', select: { user: { select: { email: true } } }, resolve: (m) => m.user.email }),
    created_at: t.expose('created_at', { type: 'DateTime', description: 'When the user joined.' }),
  }),
});

builder.prismaObjectField('Department', 'members', (t) =>
  t.relation('members', {
    extensions: { ...GRAPH_ONLY, ...listCap(MEMBERS_MAX, 'department_members.department_id') },
    description: `The department’s members, oldest first (at most ${MEMBERS_MAX}).`,
    query: { orderBy: [{ created_at: 'asc' }, { id: 'asc' }] },
  }),
);

export const DepartmentList = builder.objectRef<DepartmentListSource>('DepartmentList').implement({
  description: 'Departments, by name.',
  fields: (t) => ({
    data: t.prismaField({
      type: [Department],
      extensions: listCount('departments'),
      resolve: (query, list, _args, ctx) =>
        ctx.db.department.findMany({ ...query, where: list.where, orderBy: [{ name: 'asc' }, { id: 'asc' }] }),
    }),
  }),
});

export const DepartmentMemberList = builder.objectRef<{ departmentId: string }>('DepartmentMemberList').implement({
  description: 'A department’s members, oldest first.',
  fields: (t) => ({
    data: t.prismaField({
      type: [DepartmentMember],
      extensions: listCap(MEMBERS_MAX, 'department_members.department_id'),
      resolve: (query, list, _args, ctx) =>
        ctx.db.departmentMember.findMany({
          ...query,
          where: { department_id: list.departmentId },
          orderBy: [{ created_at: 'asc' }, { id: 'asc' }],
        }),
    }),
  }),
});

export const Acknowledgement = builder.objectRef<{ message: string }>('Acknowledgement').implement({
  description: 'Confirms an operation with a message (in Portuguese).',
  fields: (t) => ({ message: t.exposeString('message') }),
});

export const ChannelProviderEnum = builder.enumType('ChannelProvider', {
  description: '`test` accepts every send; `whatsapp_cloud` sends through the WhatsApp Cloud API.',
  values: { test: { value: 'test' }, whatsapp_cloud: { value: 'whatsapp_cloud' } } as const,
});

export const ChannelConfigInput = builder.inputType('ChannelConfigInput', {
  description: 'Provider settings, write-only (never returned). whatsapp_cloud: phone_number_id and access_token are required.',
  fields: (t) => ({
    api_url: t.string({ description: 'Base URL of the Graph API; default https://graph.facebook.com/v21.0.' }),
    phone_number_id: t.string({ description: 'The WhatsApp Business phone number id.' }),
    access_token: t.string({ description: 'Bearer token for the Graph API.' }),
    app_secret: t.string({ description: 'The app secret: signs the provider’s webhooks (X-Hub-Signature-256).' }),
    verify_token: t.string({ description: 'The token the provider echoes when verifying the webhook URL.' }),
  }),
});

export const Channel = builder.prismaObject('Channel', {
  description: 'A messaging channel. Its provider configuration is write-only and never returned.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    name: t.exposeString('name'),
    provider: t.expose('provider', { type: ChannelProviderEnum }),
    department_id: t.expose('department_id', {
      type: 'UUID',
      nullable: true,
      description: 'New conversations of this channel get this department.',
    }),
    active: t.exposeBoolean('active', { description: 'Inactive channels do not send.' }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
  }),
});

export const ConversationStatusEnum = builder.enumType('ConversationStatus', {
  description: 'A conversation is `active` (open: new messages go to it) or `archived`.',
  values: { active: { value: 'active' }, archived: { value: 'archived' } } as const,
});

export const MessageRoleEnum = builder.enumType('MessageRole', {
  description: '`user`: sent by the lead; `assistant`: sent by the organisation.',
  values: { user: { value: 'user' }, assistant: { value: 'assistant' } } as const,
});

export const MessageStatusEnum = builder.enumType('MessageStatus', {
  description: 'Outbound: pending → sent → delivered → read, or failed. Inbound messages are `received`.',
  values: {
    pending: { value: 'pending' },
    sent: { value: 'sent' },
    delivered: { value: 'delivered' },
    read: { value: 'read' },
    failed: { value: 'failed' },
    received: { value: 'received' },
  } as const,
});

export const Message = builder.prismaObject('Message', {
  description: 'A message of a conversation.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    lead_id: t.expose('lead_id', { type: 'UUID' }),
    conversation_id: t.expose('conversation_id', { type: 'UUID' }),
    channel_id: t.expose('channel_id', {
      type: 'UUID',
      nullable: true,
      description: 'The channel it came or went through; null once that channel is deleted.',
    }),
    content: t.exposeString('content'),
    type: t.exposeString('type', {
      description:
        '`text`; `template` (sent by send-template); a media message’s `image`, `audio`, `video` or `document` (inbound WhatsApp messages may carry the provider’s type).',
    }),
    role: t.expose('role', { type: MessageRoleEnum }),
    status: t.expose('status', { type: MessageStatusEnum }),
    error: t.exposeString('error', { nullable: true, description: 'Why delivery failed, as the provider reported it.' }),
    provider_message_id: t.exposeString('provider_message_id', { nullable: true, description: 'The provider’s id for the message.' }),
    // A scalar column of every loaded row: no `select`, so a message loaded by a service (inbound's
    // answer, messageAdded) is not read again for it.
    media_url: t.string({
      nullable: true,
      description: 'A media message’s file under the public media proxy (no key needed); null for a text.',
      resolve: (m, _args, ctx) => messageMediaUrl(ctx.config, m),
    }),
    template_id: t.expose('template_id', { type: 'UUID', nullable: true, description: 'A template message’s template (type `template`).' }),
    timestamp: t.expose('created_at', { type: 'DateTime', description: 'When it was stored.' }),
  }),
});

export const LastMessage = builder.objectRef<{ content: string; role: 'user' | 'assistant'; timestamp: Date }>('LastMessage').implement({
  description: 'The newest message of a conversation, kept on the conversation.',
  fields: (t) => ({
    content: t.exposeString('content'),
    role: t.field({ type: MessageRoleEnum, resolve: (m) => m.role }),
    timestamp: t.expose('timestamp', { type: 'DateTime' }),
  }),
});

/** The lead of a conversation as the spec's list item shows it; the whole lead is one field further (graph only). */
export const ConversationLead = builder.prismaObject('Lead', {
  variant: 'ConversationLead',
  description: 'The lead of a conversation: who it is and how WhatsApp knows them (`details` has the whole lead, on GraphQL).',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    name: t.exposeString('name'),
    phone: t.exposeString('phone', { nullable: true, description: 'E.164; null for a lead known by its WhatsApp user id alone.' }),
    whatsapp_user_id: t.exposeString('whatsapp_user_id', { nullable: true, description: 'Meta’s business-scoped user id (BSUID).' }),
    whatsapp_username: t.exposeString('whatsapp_username', { nullable: true, description: 'The WhatsApp username, for display.' }),
    details: t.variant(Lead, { extensions: GRAPH_ONLY, description: 'The whole lead.' }),
  }),
});

export const MediaTypeEnum = builder.enumType('MediaType', {
  description:
    'What a media message carries: `image` (JPEG, PNG, WebP), `audio` (Ogg, MP3, MP4, AAC, AMR), `video` (MP4, 3GPP) or `document` (any file).',
  values: Object.fromEntries(MEDIA_TYPES.map((v) => [v, { value: v }])) as { [K in (typeof MEDIA_TYPES)[number]]: { value: K } },
});

/** Who answers a conversation, as the conversation shows them. */
export const ConversationAssignee = builder.prismaObject('User', {
  variant: 'ConversationAssignee',
  description: 'The user who answers a conversation: id and name.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    name: t.exposeString('name'),
  }),
});

const ASSIGNMENT_DOCS = {
  assignee_id:
    'Who answers it (a user of the organisation), or null. `PUT /backend/conversations/{id}` `{assignee_id}` changes it; routing sets it.',
  first_response_at:
    'The first send through the API (send, send-media, send-template) after its first inbound message; cadence messages do not count.',
  waiting_since: 'Its oldest inbound message not yet answered by such a send, or null: routing’s queue order.',
};

export const Conversation = builder.prismaObject('Conversation', {
  description: 'A lead’s conversation. Operators reach only the conversations their departments allow.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    lead: t.relation('lead', { type: ConversationLead, description: 'The lead: id, name and phone.' }),
    last_message: t.field({
      type: LastMessage,
      nullable: true,
      description: 'Null before the first message.',
      select: { last_message_content: true, last_message_role: true, last_message_at: true },
      resolve: (c) => lastMessage(c),
    }),
    unread_count: t.exposeInt('unread_count', { description: 'Inbound messages since the conversation was last marked read.' }),
    window_expires_at: t.field({
      type: 'DateTime',
      nullable: true,
      description:
        'When WhatsApp’s 24-hour customer-service window closes: the last inbound message’s time + 24 h (null before any). On a `whatsapp_cloud` channel a closed window refuses free text and media (422 `WINDOW_CLOSED`); templates go through.',
      select: { last_inbound_at: true },
      resolve: (c) => windowExpiresAt(c),
    }),
    status: t.expose('status', { type: ConversationStatusEnum }),
    department_id: t.expose('department_id', { type: 'UUID', nullable: true }),
    channel_id: t.expose('channel_id', {
      type: 'UUID',
      nullable: true,
      description: 'The channel it started on; replies go through it by default.',
    }),
    assignee_id: t.expose('assignee_id', { type: 'UUID', nullable: true, description: ASSIGNMENT_DOCS.assignee_id }),
    assignee: t.relation('assignee', { type: ConversationAssignee, nullable: true, description: 'The assignee: id and name.' }),
    first_response_at: t.expose('first_response_at', { type: 'DateTime', nullable: true, description: ASSIGNMENT_DOCS.first_response_at }),
    waiting_since: t.expose('waiting_since', { type: 'DateTime', nullable: true, description: ASSIGNMENT_DOCS.waiting_since }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    updated_at: t.expose('updated_at', { type: 'DateTime', description: 'Last activity.' }),
    messages: t.relatedConnection('messages', {
      cursor: 'id',
      extensions: GRAPH_ONLY,
      description: 'The messages, oldest first: `last: n` reads the newest n (at most 100 per page).',
      maxSize: 100,
      defaultSize: 20,
      totalCount: true,
      query: { orderBy: [{ created_at: 'asc' }, { id: 'asc' }] },
    }),
  }),
});

builder.prismaObjectField('Lead', 'conversations', (t) =>
  t.relatedConnection('conversations', {
    cursor: 'id',
    extensions: GRAPH_ONLY,
    description: 'The lead’s conversations the caller can see, latest activity first (at most 100 per page).',
    maxSize: 100,
    defaultSize: 20,
    totalCount: true,
    // Pothos nests this into the lead's query; the scoped client filters it (and its count) by visibility.
    query: { orderBy: [{ updated_at: 'desc' }, { id: 'desc' }] },
  }),
);

export const ConversationPage = builder.objectRef<ConversationPageSource>('ConversationPage').implement({
  description: 'A page of conversations, latest activity first (a sync page: by updated_at, id ascending).',
  fields: (t) => ({
    data: t.prismaField({
      type: [Conversation],
      resolve: (query, page, _args, ctx) =>
        page.sync
          ? page.sync.rows(query)
          : ctx.db.conversation.findMany({
              ...query,
              where: page.where,
              orderBy: [{ updated_at: 'desc' }, { id: 'desc' }],
              skip: page.offset,
              take: page.limit,
            }),
    }),
    pagination: t.field({
      type: SyncPagination,
      resolve: async (page, _args, ctx) => {
        if (!page.sync) return { ...offsetPagination(await ctx.db.conversation.count({ where: page.where }), page), next_cursor: null };
        const where = { AND: [page.where, syncWhere(page.sync.window) as Prisma.ConversationWhereInput] };
        const [total, next] = await Promise.all([ctx.db.conversation.count({ where }), page.sync.next()]);
        return syncPagination(total, page.limit, next);
      },
    }),
  }),
});

export const MessagePage = builder.objectRef<PageSource<Prisma.MessageWhereInput>>('MessagePage').implement({
  description: 'A page of a lead’s message history: `offset` counts back from the newest message; each page is ordered oldest to newest.',
  fields: (t) => ({
    data: t.prismaField({
      type: [Message],
      resolve: async (query, page, _args, ctx) =>
        (
          await ctx.db.message.findMany({
            ...query,
            where: page.where,
            orderBy: [{ created_at: 'desc' }, { id: 'desc' }],
            skip: page.offset,
            take: page.limit,
          })
        ).reverse(),
    }),
    pagination: t.field({
      type: OffsetPagination,
      resolve: async (page, _args, ctx) => offsetPagination(await ctx.db.message.count({ where: page.where }), page),
    }),
  }),
});

/**
 * A row the service returned with the relations it read (an inbound message's lead with its status, its
 * conversation with the lead) when it carries every relation the planned query asks for; else the row
 * read again with the plan. Pothos then answers the nested fields from the row.
 */
function loadedOr<R extends object>(query: { include?: object; select?: object }, row: R, read: () => Promise<unknown>): R | Promise<R> {
  const planned = [...Object.keys(query.include ?? {}), ...Object.keys(query.select ?? {})];
  return planned.every((key) => (row as Record<string, unknown>)[key] !== undefined) ? row : (read() as Promise<R>);
}

export const InboundResultType = builder.objectRef<InboundResult>('InboundResult').implement({
  description: 'What an inbound message touched: its lead, its conversation and the stored message.',
  fields: (t) => ({
    lead: t.prismaField({
      type: Lead,
      resolve: (query, r, _args, ctx) =>
        loadedOr(query, r.lead, () => ctx.db.lead.findUniqueOrThrow({ ...query, where: { id: r.lead.id } })),
    }),
    conversation: t.prismaField({
      type: Conversation,
      resolve: (query, r, _args, ctx) =>
        loadedOr(query, r.conversation, () => ctx.db.conversation.findUniqueOrThrow({ ...query, where: { id: r.conversation.id } })),
    }),
    message: t.prismaField({
      type: Message,
      resolve: (query, r, _args, ctx) =>
        loadedOr(query, r.message, () => ctx.db.message.findUniqueOrThrow({ ...query, where: { id: r.message.id } })),
    }),
  }),
});

// ---- conversationUpdated ----

const ConversationSnapshotLead = builder.objectRef<ConversationSnapshot['lead']>('ConversationSnapshotLead').implement({
  description: 'The lead of a conversation: who it is and how WhatsApp knows them.',
  fields: (t) => ({
    id: t.field({ type: 'UUID', resolve: (l) => l.id }),
    name: t.exposeString('name'),
    phone: t.exposeString('phone', { nullable: true, description: 'E.164; null for a lead known by its WhatsApp user id alone.' }),
    whatsapp_user_id: t.exposeString('whatsapp_user_id', { nullable: true, description: 'Meta’s business-scoped user id (BSUID).' }),
    whatsapp_username: t.exposeString('whatsapp_username', { nullable: true, description: 'The WhatsApp username, for display.' }),
  }),
});

const ConversationSnapshotAssignee = builder
  .objectRef<NonNullable<ConversationSnapshot['assignee']>>('ConversationSnapshotAssignee')
  .implement({
    description: 'The user who answers a conversation: id and name.',
    fields: (t) => ({
      id: t.field({ type: 'UUID', resolve: (a) => a.id }),
      name: t.exposeString('name'),
    }),
  });

export const ConversationSnapshotType = builder.objectRef<ConversationSnapshot>('ConversationSnapshot').implement({
  description: 'A conversation as its REST read returns it, as the change left it (the fields of Conversation without its graph edges).',
  fields: (t) => ({
    id: t.field({ type: 'UUID', resolve: (c) => c.id }),
    lead: t.field({ type: ConversationSnapshotLead, resolve: (c) => c.lead }),
    last_message: t.field({
      type: LastMessage,
      nullable: true,
      description: 'Null before the first message.',
      resolve: (c) => c.last_message,
    }),
    unread_count: t.exposeInt('unread_count', { description: 'Inbound messages since the conversation was last marked read.' }),
    window_expires_at: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When WhatsApp’s 24-hour customer-service window closes (null before any inbound message).',
      resolve: (c) => c.window_expires_at,
    }),
    status: t.field({ type: ConversationStatusEnum, resolve: (c) => c.status }),
    department_id: t.field({ type: 'UUID', nullable: true, resolve: (c) => c.department_id }),
    channel_id: t.field({ type: 'UUID', nullable: true, resolve: (c) => c.channel_id }),
    assignee_id: t.field({ type: 'UUID', nullable: true, description: ASSIGNMENT_DOCS.assignee_id, resolve: (c) => c.assignee_id }),
    assignee: t.field({ type: ConversationSnapshotAssignee, nullable: true, resolve: (c) => c.assignee }),
    first_response_at: t.field({
      type: 'DateTime',
      nullable: true,
      description: ASSIGNMENT_DOCS.first_response_at,
      resolve: (c) => c.first_response_at,
    }),
    waiting_since: t.field({
      type: 'DateTime',
      nullable: true,
      description: ASSIGNMENT_DOCS.waiting_since,
      resolve: (c) => c.waiting_since,
    }),
    created_at: t.field({ type: 'DateTime', resolve: (c) => c.created_at }),
    updated_at: t.field({ type: 'DateTime', description: 'Last activity.', resolve: (c) => c.updated_at }),
  }),
});

export const ConversationChangeKindEnum = builder.enumType('ConversationChangeKind', {
  description:
    'What happened to a conversation: a new `message` (inbound or sent), marked `read`, `archived`, `reopened` (back to active), `assigned` to a department (or none), or given to an `assignee` (or none).',
  values: {
    message: { value: 'message' },
    read: { value: 'read' },
    archived: { value: 'archived' },
    reopened: { value: 'reopened' },
    assigned: { value: 'assigned' },
    assignee: { value: 'assignee' },
  } as const,
});

export const ConversationChangeType = builder.objectRef<ConversationChange>('ConversationChange').implement({
  description: 'A committed change of a conversation the caller can see.',
  fields: (t) => ({
    kind: t.field({ type: ConversationChangeKindEnum, resolve: (c) => c.kind }),
    conversation: t.field({ type: ConversationSnapshotType, resolve: (c) => c.conversation }),
  }),
});
