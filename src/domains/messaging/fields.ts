// Root fields of messaging. REST routes (./index.ts) run these same fields.
import { syncArgs } from '../common/sync.js';
import { MAX_FILE_BYTES } from '../../config.js';
import { listCount } from '../../schema/list-bounds.js';
import { builder } from '../../schema/builder.js';
import { idArg } from '../common/args.js';
import * as channels from './channels.js';
import * as conversations from './conversations.js';
import { conversationPageJson } from './conversation-json.js';
import { jsonField } from '../../schema/json-fields.js';
import * as departments from './departments.js';
import * as inbound from './inbound.js';
import * as live from './live.js';
import * as send from './send.js';
import * as sendMedia from './send-media.js';
import * as status from './status.js';
import {
  Acknowledgement,
  Channel,
  ChannelConfigInput,
  ChannelProviderEnum,
  Conversation,
  ConversationPage,
  ConversationStatusEnum,
  Department,
  RoutingEnum,
  DepartmentList,
  DepartmentMemberList,
  InboundResultType,
  MediaTypeEnum,
  Message,
  ConversationChangeType,
  MessagePage,
} from './types.js';

// ---- Departments and members ----

builder.queryField('departments', (t) =>
  t.field({
    type: DepartmentList,
    description: 'Every department of the organisation (owner or admin).',
    resolve: (_, __, ctx) => departments.listDepartments(ctx),
  }),
);

builder.queryField('myDepartments', (t) =>
  t.field({
    type: DepartmentList,
    description: 'The departments the caller belongs to (any role).',
    resolve: (_, __, ctx) => departments.myDepartments(ctx),
  }),
);

builder.mutationField('createDepartment', (t) =>
  t.prismaField({
    type: Department,
    description: 'Creates a department (owner or admin). A name already used in the organisation is a conflict.',
    args: {
      name: t.arg.string({ required: true, description: '1 to 100 characters, unique in the organisation.' }),
      description: t.arg.string({ description: 'Up to 1,000 characters.' }),
      routing: t.arg({ type: RoutingEnum, description: 'How its conversations get an assignee; default manual.' }),
    },
    resolve: (query, _, args, ctx) => departments.createDepartment(ctx, args, query),
  }),
);

builder.mutationField('updateDepartment', (t) =>
  t.prismaField({
    type: Department,
    description: 'Renames or describes a department (owner or admin); omitted fields are unchanged.',
    args: {
      ...idArg('The department.'),
      name: t.arg.string({ description: '1 to 100 characters, unique in the organisation.' }),
      description: t.arg.string({ description: 'Up to 1,000 characters; null clears it.' }),
      routing: t.arg({ type: RoutingEnum, description: 'How its conversations get an assignee.' }),
    },
    resolve: (query, _, args, ctx) => departments.updateDepartment(ctx, args.id, args, query),
  }),
);

builder.mutationField('deleteDepartment', (t) =>
  t.boolean({
    description: 'Deletes a department (owner or admin): its channels and conversations keep existing without a department.',
    args: idArg('The department.'),
    resolve: (_, args, ctx) => departments.deleteDepartment(ctx, args.id),
  }),
);

builder.queryField('departmentMembers', (t) =>
  t.field({
    type: DepartmentMemberList,
    description: 'The members of a department (owner or admin).',
    args: idArg('The department.'),
    resolve: (_, args, ctx) => departments.listMembers(ctx, args.id),
  }),
);

const memberArgs = builder.args((t) => ({
  ...idArg('The department.'),
  user_id: t.field({ type: 'UUID', required: true, description: 'A user of the organisation.' }),
}));

builder.mutationField('addDepartmentMember', (t) =>
  t.field({
    type: Acknowledgement,
    description: 'Adds a user of the organisation to a department (owner or admin). Already a member is a conflict.',
    args: memberArgs,
    resolve: (_, args, ctx) => departments.addMember(ctx, args.id, args.user_id),
  }),
);

builder.mutationField('removeDepartmentMember', (t) =>
  t.boolean({
    description: 'Removes a user from a department (owner or admin).',
    args: memberArgs,
    resolve: (_, args, ctx) => departments.removeMember(ctx, args.id, args.user_id),
  }),
);

// ---- Channels ----

builder.queryField('channels', (t) =>
  t.prismaField({
    type: [Channel],
    extensions: listCount('channels'),
    description: 'The organisation’s channels, oldest first.',
    resolve: (query, _, __, ctx) => channels.listChannels(ctx, query),
  }),
);

builder.queryField('channel', (t) =>
  t.prismaField({
    type: Channel,
    description: 'One channel.',
    args: idArg('The channel.'),
    resolve: (query, _, args, ctx) => channels.getChannel(ctx, args.id, query),
  }),
);

builder.mutationField('createChannel', (t) =>
  t.prismaField({
    type: Channel,
    description: 'Creates a channel (owner or admin).',
    args: {
      name: t.arg.string({ required: true, description: '1 to 100 characters.' }),
      provider: t.arg({ type: ChannelProviderEnum, required: true }),
      department_id: t.arg({ type: 'UUID', description: 'A department of the organisation.' }),
      active: t.arg.boolean({ description: 'Default true.' }),
      config: t.arg({ type: ChannelConfigInput }),
    },
    resolve: (query, _, args, ctx) => channels.createChannel(ctx, args, query),
  }),
);

builder.mutationField('updateChannel', (t) =>
  t.prismaField({
    type: Channel,
    description: 'Changes a channel (owner or admin); omitted fields are unchanged, a given config replaces the stored one.',
    args: {
      ...idArg('The channel.'),
      name: t.arg.string({ description: '1 to 100 characters.' }),
      department_id: t.arg({ type: 'UUID', description: 'A department of the organisation; null clears it.' }),
      active: t.arg.boolean(),
      config: t.arg({ type: ChannelConfigInput }),
    },
    resolve: (query, _, args, ctx) => channels.updateChannel(ctx, args.id, args, query),
  }),
);

builder.mutationField('deleteChannel', (t) =>
  t.boolean({
    description: 'Deletes a channel (owner or admin); its conversations and messages stay.',
    args: idArg('The channel.'),
    resolve: (_, args, ctx) => channels.deleteChannel(ctx, args.id),
  }),
);

// ---- Inbound ----

builder.mutationField('receiveInboundMessage', (t) =>
  t.field({
    type: InboundResultType,
    description:
      'An inbound message on a channel from a sender known by phone (`from`), WhatsApp user id (`user_id`) or both: finds the lead by `user_id` first, then by phone (a Brazilian mobile with or without its ninth digit is one number), fills what the lead lacks of the two and of `username`, or creates the lead; finds or creates the open conversation, stores the message (role user) and counts it unread. An operator reports only into conversations it can see.',
    args: {
      ...idArg('The channel.'),
      from: t.arg.string({
        description: 'The sender’s phone; normalised to E.164 (5511… → +5511…), at least 8 digits. Required without `user_id`.',
      }),
      user_id: t.arg.string({
        description: 'The sender’s business-scoped WhatsApp user id (BSUID, e.g. BR.1502576394655843). Required without `from`.',
      }),
      username: t.arg.string({ description: 'The sender’s WhatsApp username (display only, up to 64 characters).' }),
      content: t.arg.string({ required: true, description: 'The text, up to 4,096 characters.' }),
      name: t.arg.string({ description: 'The sender’s name, for a new lead (default: the username, else the phone, else the user id).' }),
    },
    resolve: (_, args, ctx) => inbound.receiveInbound(ctx, args.id, args),
  }),
);

// ---- Conversations and history ----

builder.queryField('conversations', (t) =>
  t.field({
    type: ConversationPage,
    // Served as JSON text built by PostgreSQL when the selection allows (conversation-json.ts).
    extensions: jsonField(conversationPageJson),
    description:
      'Conversations the caller can see, latest activity first; with `updated_since` or `cursor`, a sync page: by updated_at, id ascending (`offset` is ignored).',
    args: {
      ...syncArgs,
      limit: t.arg.int({ description: `1 to ${conversations.CONVERSATIONS_MAX_LIMIT}, default 20 (out of range: 20).` }),
      offset: t.arg.int({ description: 'Default 0.' }),
      lead_id: t.arg({ type: 'UUID', description: 'Only this lead’s conversations.' }),
      status: t.arg({ type: ConversationStatusEnum, description: 'active or archived.' }),
      assignee_id: t.arg.string({ description: 'A user’s id, `me` (the key’s user) or `none` (unassigned).' }),
    },
    resolve: (_, args, ctx) => conversations.conversationPage(ctx, args),
  }),
);

builder.queryField('conversation', (t) =>
  t.prismaField({
    type: Conversation,
    description: 'One conversation, if the caller can see it.',
    args: idArg('The conversation.'),
    resolve: (query, _, args, ctx) => conversations.getConversation(ctx, args.id, query),
  }),
);

builder.mutationField('updateConversation', (t) =>
  t.prismaField({
    type: Conversation,
    description: 'Archives or reopens a conversation, moves it to a department, marks it read, or assigns it.',
    args: {
      ...idArg('The conversation.'),
      status: t.arg({ type: ConversationStatusEnum, description: 'Reopening while the lead has another open conversation is a conflict.' }),
      department_id: t.arg({ type: 'UUID', description: 'A department of the organisation; null clears it.' }),
      read: t.arg.boolean({ description: '`true` sets unread_count to 0.' }),
      assignee_id: t.arg({
        type: 'UUID',
        description:
          'Who answers it: a user who can see it (an operator must be a member of its department); null unassigns. Within the user’s capacity unless the caller is an owner or admin.',
      }),
    },
    resolve: (query, _, args, ctx) => conversations.updateConversation(ctx, args.id, args, query),
  }),
);

builder.queryField('leadMessages', (t) =>
  t.field({
    type: MessagePage,
    description: 'A lead’s message history in the conversations the caller can see; newest last.',
    args: {
      ...idArg('The lead.'),
      limit: t.arg.int({ description: '1 to 100, default 20.' }),
      offset: t.arg.int({ description: 'Messages to skip, counting back from the newest. Default 0.' }),
    },
    resolve: (_, args, ctx) => conversations.leadMessages(ctx, args.id, args),
  }),
);

// ---- Sending and statuses ----

builder.mutationField('sendMessage', (t) =>
  t.prismaField({
    type: Message,
    description:
      'Sends a text to a lead: stored `pending` in the lead’s open conversation (created if none) and delivered in the background through the channel. Without channel_id: the open conversation’s channel, else the oldest active channel.',
    args: {
      lead_id: t.arg({ type: 'UUID', required: true, description: 'The lead.' }),
      content: t.arg.string({ required: true, description: 'The text, up to 4,096 characters.' }),
      type: t.arg.string({ description: 'Only `text` (the default).' }),
      channel_id: t.arg({ type: 'UUID', description: 'An active channel of the organisation.' }),
    },
    resolve: (query, _, args, ctx) =>
      send.sendMessage(ctx, args).then((m) => ctx.db.message.findUniqueOrThrow({ ...query, where: { id: m.id } })),
  }),
);

builder.mutationField('sendMediaMessage', (t) =>
  t.prismaField({
    type: Message,
    description:
      'Sends a file (at most 10 MB, its type judged from its content) to a phone through a channel: the lead is found or created by the phone, the message stored `pending` in its open conversation (created if none) and delivered in the background; the file is served at `media_url`.',
    args: {
      channel_id: t.arg({ type: 'UUID', required: true, description: 'An active channel of the organisation.' }),
      remote_jid: t.arg.string({
        required: true,
        description: 'The recipient’s phone: digits with the country code, optional + and @s.whatsapp.net suffix.',
      }),
      message_type: t.arg({ type: MediaTypeEnum, required: true }),
      content: t.arg.string({ description: 'A caption, up to 1,024 characters (not for audio).' }),
      file: t.arg({ type: 'File', required: true, description: 'The file.' }),
    },
    resolve: async (query, _, args, ctx) => {
      const stored = await ctx.storage.put(args.file.stream(), { maxBytes: MAX_FILE_BYTES });
      const message = await sendMedia.sendMedia(ctx, { ...stored, filename: args.file.name, declaredType: args.file.type }, args);
      return ctx.db.message.findUniqueOrThrow({ ...query, where: { id: message.id } });
    },
  }),
);

builder.mutationField('reportMessageStatus', (t) =>
  t.prismaField({
    type: Message,
    description:
      'A provider’s status callback for an outbound message of the channel (an operator reaches only messages it can see). Statuses only move forward.',
    args: {
      ...idArg('The channel.'),
      message_id: t.arg.string({ required: true, description: 'Our message id or the provider’s.' }),
      status: t.arg.string({ required: true, description: 'sent, delivered, read or failed.' }),
      error: t.arg.string({ description: 'The provider’s reason, with failed.' }),
    },
    resolve: (query, _, args, ctx) =>
      status.reportStatus(ctx, args.id, args).then((m) => ctx.db.message.findUniqueOrThrow({ ...query, where: { id: m.id } })),
  }),
);

// ---- Live messages ----

builder.subscriptionField('messageAdded', (t) =>
  t.field({
    type: Message,
    description: 'New messages (inbound and sent) of the conversations the caller can see, as they are stored.',
    subscribe: (_, __, ctx) => live.messagesFor(ctx),
    resolve: (message) => message,
  }),
);

builder.subscriptionField('conversationUpdated', (t) =>
  t.field({
    type: ConversationChangeType,
    description: 'Changes of the conversations the caller can see (a new message, read, archived or reopened, assigned), once they commit.',
    subscribe: (_, __, ctx) => live.conversationChangesFor(ctx),
    resolve: (change) => change,
  }),
);
