import { listCap, listCount } from '../../schema/list-bounds.js';
import { builder } from '../../schema/builder.js';
import { idArg } from '../common/args.js';
import { CreatedWebhook, Redelivery, Webhook, WebhookDelivery, WebhookDeliveryPage, WebhookEventType, WebhookSecret } from './types.js';
import { subscribableEventTypes } from './event-types.js';
import * as webhooks from './service.js';

// Read when the schema is built, once the domains have registered their event types.
const eventsDescription = () => `Event kinds to deliver: ${subscribableEventTypes().join(', ')}.`;

builder.queryField('webhooks', (t) =>
  t.prismaField({
    type: [Webhook],
    extensions: listCount('webhooks'),
    description: 'Webhooks of the organisation, oldest first (Owner/Admin).',
    resolve: (query, _, __, ctx) => webhooks.listWebhooks(ctx, query),
  }),
);

builder.queryField('webhookEventTypes', (t) =>
  t.field({
    type: [WebhookEventType],
    // A fixed list: the event kinds and webhook.test.
    extensions: listCap(subscribableEventTypes().length + 1),
    description: 'Every event type with its description and the JSON Schema of its delivery body (Owner/Admin).',
    resolve: (_, __, ctx) => webhooks.listEventTypes(ctx),
  }),
);

builder.queryField('webhook', (t) =>
  t.prismaField({
    type: Webhook,
    args: idArg('The webhook.'),
    description: 'One webhook (Owner/Admin).',
    resolve: (query, _, args, ctx) => webhooks.getWebhook(ctx, args.id, query),
  }),
);

builder.queryField('webhookDeliveries', (t) =>
  t.field({
    type: WebhookDeliveryPage,
    description: 'A webhook’s delivery log, newest first: one entry per attempt (Owner/Admin).',
    args: {
      ...idArg('The webhook.'),
      limit: t.arg.int({ description: '1 to 100, default 20.' }),
      offset: t.arg.int({ description: 'Default 0.' }),
    },
    resolve: (_, args, ctx) => webhooks.deliveryPage(ctx, args.id, args),
  }),
);

builder.mutationField('createWebhook', (t) =>
  t.field({
    type: CreatedWebhook,
    description: 'Registers a webhook (Owner/Admin). The answer carries its signing secret, once.',
    args: {
      url: t.arg.string({
        required: true,
        description: 'https URL of a public host (http and private hosts only with WEBHOOK_ALLOW_PRIVATE_URLS).',
      }),
      events: t.arg.stringList({ required: true, description: eventsDescription() }),
      active: t.arg.boolean({ description: 'Default true.' }),
    },
    resolve: (_, args, ctx) => webhooks.createWebhook(ctx, args),
  }),
);

builder.mutationField('updateWebhook', (t) =>
  t.prismaField({
    type: Webhook,
    description: 'Changes a webhook’s url, events or active flag; omitted fields are unchanged (Owner/Admin).',
    args: {
      ...idArg('The webhook.'),
      url: t.arg.string({ description: 'New URL, checked as on creation.' }),
      events: t.arg.stringList({ description: eventsDescription() }),
      active: t.arg.boolean({ description: 'false stops deliveries, pending retries included.' }),
    },
    resolve: (query, _, args, ctx) => webhooks.updateWebhook(ctx, args.id, args, query),
  }),
);

builder.mutationField('deleteWebhook', (t) =>
  t.boolean({
    description: 'Deletes a webhook with its delivery log (Owner/Admin).',
    args: idArg('The webhook.'),
    resolve: (_, args, ctx) => webhooks.deleteWebhook(ctx, args.id),
  }),
);

builder.mutationField('regenerateWebhookSecret', (t) =>
  t.field({
    type: WebhookSecret,
    description: 'A new signing secret (Owner/Admin). For 24 hours deliveries carry signatures by both the new and the previous secret.',
    args: idArg('The webhook.'),
    resolve: (_, args, ctx) => webhooks.regenerateSecret(ctx, args.id),
  }),
);

builder.mutationField('redeliverWebhookDelivery', (t) =>
  t.field({
    type: Redelivery,
    description:
      'Queues the delivery’s event to its webhook again: a new attempt with the same webhook-id (Owner/Admin). Answers with the new delivery’s id.',
    args: { ...idArg('The webhook.'), delivery_id: t.arg({ type: 'UUID', required: true, description: 'A delivery of that webhook.' }) },
    resolve: async (_, args, ctx) => ({ delivery_id: await webhooks.redeliver(ctx, args.id, args.delivery_id) }),
  }),
);

builder.mutationField('testWebhook', (t) =>
  t.prismaField({
    type: WebhookDelivery,
    description: 'Sends a signed `webhook.test` event to the webhook now and answers with its delivery (Owner/Admin).',
    args: idArg('The webhook.'),
    resolve: async (query, _, args, ctx) =>
      ctx.db.webhookDelivery.findUniqueOrThrow({ ...query, where: { id: await webhooks.sendTestEvent(ctx, args.id) } }),
  }),
);
