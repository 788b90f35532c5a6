// Messaging: departments and members (bare style), channels, inbound and outbound messages,
// conversations and message history (envelope style), with one operator visibility policy.
import { defineDomain } from '../manifest.js';
import { messageDeliveryQueue } from './deliver.js';
import { MESSAGING_EVENT_TYPES } from './event-types.js';
import './fields.js';
import { sendMediaHandler } from './send-media-route.js';
import { receiveWebhook, verifyWebhook } from './whatsapp-webhook.js';

export const messagingDomain = defineDomain({
  name: 'messaging',
  description: 'Departments and their members (bare style); channels, inbound and outbound messages, conversations and message history (envelope style).',
  permissions: [
    { name: 'messages.view', roles: ['owner', 'admin', 'operator'], description: 'Read conversations, message history and channels (within department visibility), and follow new messages live.' },
    { name: 'messages.send', roles: ['owner', 'admin', 'operator'], description: 'Send text and media messages; report a channel’s inbound messages and delivery statuses.' },
    { name: 'conversations.manage', roles: ['owner', 'admin', 'operator'], description: 'Change a conversation’s status and department, and mark it read.' },
    { name: 'channels.manage', roles: ['owner', 'admin'], description: 'Create, change and delete channels.' },
    { name: 'departments.manage', roles: ['owner', 'admin'], description: 'List every department; create, change and delete departments and their members.' },
  ],
  queues: [messageDeliveryQueue],
  events: MESSAGING_EVENT_TYPES,
  // A sent media message keeps its file (send-media.ts).
  storedFiles: [{ table: 'messages', key: 'media_key', contentType: 'media_mime_type' }],
  fields: { 'Mutation.sendMediaMessage': 'messages.send', 'Subscription.messageAdded': 'messages.view', 'Subscription.conversationUpdated': 'messages.view' },
  routes: [
    { method: 'GET', path: '/departments', field: 'Query.departments', style: 'bare', access: 'departments.manage', summary: 'List departments' },
    { method: 'GET', path: '/departments/my', field: 'Query.myDepartments', style: 'bare', access: 'member', summary: 'The caller’s departments' },
    { method: 'POST', path: '/departments', field: 'Mutation.createDepartment', style: 'bare', status: 201, access: 'departments.manage', summary: 'Create a department' },
    { method: 'PUT', path: '/departments/:id', field: 'Mutation.updateDepartment', style: 'bare', access: 'departments.manage', summary: 'Update a department' },
    { method: 'DELETE', path: '/departments/:id', field: 'Mutation.deleteDepartment', style: 'bare', status: 204, access: 'departments.manage', summary: 'Delete a department' },
    { method: 'GET', path: '/departments/:id/members', field: 'Query.departmentMembers', style: 'bare', access: 'departments.manage', summary: 'List a department’s members' },
    { method: 'POST', path: '/departments/:id/members', field: 'Mutation.addDepartmentMember', style: 'bare', access: 'departments.manage', summary: 'Add a member' },
    { method: 'DELETE', path: '/departments/:id/members/:user_id', field: 'Mutation.removeDepartmentMember', style: 'bare', status: 204, access: 'departments.manage', summary: 'Remove a member' },
    { method: 'GET', path: '/channels', field: 'Query.channels', style: 'envelope', access: ['messages.view', 'messages.send', 'channels.manage'], summary: 'List channels' },
    { method: 'POST', path: '/channels', field: 'Mutation.createChannel', style: 'envelope', status: 201, access: 'channels.manage', summary: 'Create a channel' },
    { method: 'GET', path: '/channels/:id', field: 'Query.channel', style: 'envelope', access: ['messages.view', 'messages.send', 'channels.manage'], summary: 'Get a channel' },
    { method: 'PUT', path: '/channels/:id', field: 'Mutation.updateChannel', style: 'envelope', status: 204, access: 'channels.manage', summary: 'Update a channel' },
    { method: 'DELETE', path: '/channels/:id', field: 'Mutation.deleteChannel', style: 'envelope', status: 204, access: 'channels.manage', summary: 'Delete a channel' },
    { method: 'POST', path: '/channels/:id/inbound', field: 'Mutation.receiveInboundMessage', style: 'envelope', access: 'messages.send', summary: 'Report an inbound message' },
    { method: 'POST', path: '/channels/:id/status', field: 'Mutation.reportMessageStatus', style: 'envelope', access: 'messages.send', summary: 'Report a message status' },
    { method: 'GET', path: '/channels/:id/whatsapp', style: 'envelope', access: 'public', handler: verifyWebhook, summary: 'WhatsApp Cloud webhook verification (hub.challenge)', openapi: { errors: [403] } },
    { method: 'POST', path: '/channels/:id/whatsapp', style: 'envelope', access: 'public', handler: receiveWebhook, summary: 'WhatsApp Cloud webhook (signed with X-Hub-Signature-256)', openapi: { errors: [401] } },
    { method: 'POST', path: '/messages/send', field: 'Mutation.sendMessage', style: 'envelope', access: 'messages.send', summary: 'Send a text message to a lead', openapi: { errors: [502] } },
    {
      method: 'POST',
      path: '/messages/send-media',
      handler: sendMediaHandler,
      style: 'envelope',
      access: 'messages.send',
      summary: 'Send a file to a phone through a channel (multipart)',
      openapi: {
        description:
          'multipart/form-data, streamed: the file goes to storage as it arrives. The lead is found or created by `remote_jid`; the message is stored `pending` and delivered in the background; its file is served at `media_url`. An unknown, inactive or other organisation’s channel is 502 `CHANNEL_ERROR`; a `remote_jid` that is not a phone able to receive messages is 400 `INVALID_PHONE`; a file over 10 MB is 413. Nothing is stored when the request fails.',
        requestBody: {
          required: true,
          content: {
            'multipart/form-data': {
              schema: {
                type: 'object',
                properties: {
                  channel_id: { type: 'string', format: 'uuid', description: 'An active channel of the organisation.' },
                  remote_jid: { type: 'string', description: 'The recipient’s phone: digits with the country code, optional + and @s.whatsapp.net suffix.' },
                  message_type: { type: 'string', enum: ['image', 'audio', 'video', 'document'], description: 'image: JPEG, PNG, WebP; audio: Ogg, MP3, MP4, AAC, AMR; video: MP4, 3GPP; document: any file. Judged from the content.' },
                  content: { type: 'string', maxLength: 1024, description: 'A caption (not for audio).' },
                  file: { type: 'string', format: 'binary', description: 'The file, at most 10 MB.' },
                },
                required: ['channel_id', 'remote_jid', 'message_type', 'file'],
              },
            },
          },
        },
        result: { $ref: '#/components/schemas/Message' },
        // 404: a conversation the operator cannot see.
        errors: [404, 502],
      },
    },
    { method: 'GET', path: '/conversations', field: 'Query.conversations', style: 'envelope', wrap: 'spread', access: 'messages.view', summary: 'List conversations' },
    { method: 'GET', path: '/conversations/:id', field: 'Query.conversation', style: 'envelope', access: 'messages.view', summary: 'Get a conversation' },
    { method: 'PUT', path: '/conversations/:id', field: 'Mutation.updateConversation', style: 'envelope', access: 'conversations.manage', summary: 'Update a conversation' },
    { method: 'GET', path: '/leads/:id/messages', field: 'Query.leadMessages', style: 'envelope', wrap: 'spread', access: 'messages.view', summary: 'A lead’s message history' },
  ],
});
