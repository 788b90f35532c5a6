// GraphQL types of webhooks: Webhook (spec fields; the secret is never read back), the answers that
// show a secret once, the delivery log rows and their page. `Webhook.deliveries` is a graph-only
// connection over the same log.
import { builder, GRAPH_ONLY } from '../../schema/builder.js';
import { OffsetPagination, offsetPagination } from '../common/types.js';

export const Webhook = builder.prismaObject('Webhook', {
  description: 'A URL that receives signed deliveries of the event kinds it subscribes to.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    url: t.exposeString('url', { description: 'Where deliveries are POSTed: https (http too with WEBHOOK_ALLOW_PRIVATE_URLS).' }),
    events: t.exposeStringList('events', { description: 'Event kinds delivered, e.g. lead.created, deal.won.' }),
    active: t.exposeBoolean('active', {
      description: 'Inactive hooks get nothing, and never get the events raised meanwhile. A 410 answer deactivates a hook.',
    }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    deliveries: t.relatedConnection('deliveries', {
      cursor: 'id',
      extensions: GRAPH_ONLY,
      description: 'The delivery log, newest first: one entry per attempt (at most 100 per page).',
      maxSize: 100,
      defaultSize: 20,
      totalCount: true,
      query: { orderBy: [{ created_at: 'desc' }, { id: 'desc' }] },
    }),
  }),
});

type CreatedHook = { id: string; url: string; events: string[]; active: boolean; created_at: Date; secret: string };

export const CreatedWebhook = builder.objectRef<CreatedHook>('CreatedWebhook').implement({
  description: 'A new webhook with its signing secret, shown only here (and on regeneration).',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    url: t.exposeString('url'),
    events: t.exposeStringList('events'),
    active: t.exposeBoolean('active'),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    secret: t.exposeString('secret', {
      nullable: true,
      description:
        'whsec_…: verifies the webhook-signature header (Standard Webhooks). Store it now (null in an Idempotency-Key replay of this answer: it is shown once).',
    }),
  }),
});

export const WebhookSecret = builder.objectRef<{ secret: string }>('WebhookSecret').implement({
  description: 'A regenerated signing secret. The previous one keeps signing (a second signature) for 24 hours.',
  fields: (t) => ({
    secret: t.exposeString('secret', {
      nullable: true,
      description: 'whsec_… (null in an Idempotency-Key replay of this answer: it is shown once).',
    }),
  }),
});

export const WebhookDelivery = builder.prismaObject('WebhookDelivery', {
  description: 'One delivery attempt of an event to a webhook.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    event_id: t.expose('event_id', { type: 'UUID' }),
    event_type: t.exposeString('event_type'),
    attempt: t.exposeInt('attempt', {
      description: '1 for the first attempt of this event to this webhook; redeliveries continue the count.',
    }),
    status: t.exposeString('status', {
      description: '`succeeded` (2xx), `retrying` (another attempt at next_attempt_at) or `failed` (no more attempts).',
    }),
    response_status: t.exposeInt('response_status', {
      nullable: true,
      description: 'The receiver’s HTTP status; null when none came (network error, timeout, refused address).',
    }),
    error: t.exposeString('error', { nullable: true, description: 'Why the attempt failed.' }),
    duration_ms: t.exposeInt('duration_ms'),
    next_attempt_at: t.expose('next_attempt_at', {
      type: 'DateTime',
      nullable: true,
      description: 'When the next attempt is due, while retrying.',
    }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
  }),
});

export const WebhookEventType = builder
  .objectRef<{ type: string; description: string; schema: Record<string, unknown> }>('WebhookEventType')
  .implement({
    description: 'An event type webhooks can receive.',
    fields: (t) => ({
      type: t.exposeString('type', { description: 'e.g. deal.stage_changed.' }),
      description: t.exposeString('description', { description: 'What the event means.' }),
      schema: t.expose('schema', {
        type: 'JSONObject',
        description: 'JSON Schema (2020-12) of the delivery body `{type, timestamp, data}`, derived from the REST read `data` repeats.',
      }),
    }),
  });

export const Redelivery = builder.objectRef<{ delivery_id: string }>('Redelivery').implement({
  description: 'A queued redelivery.',
  fields: (t) => ({
    success: t.boolean({ description: 'Always true.', resolve: () => true }),
    delivery_id: t.expose('delivery_id', {
      type: 'UUID',
      description: 'The id of the new delivery (its row in the delivery log once the attempt has run, within seconds).',
    }),
  }),
});

export interface DeliveryPageSource {
  webhookId: string;
  limit: number;
  offset: number;
}

export const WebhookDeliveryPage = builder.objectRef<DeliveryPageSource>('WebhookDeliveryPage').implement({
  description: 'A page of a webhook’s delivery log, newest first.',
  fields: (t) => ({
    data: t.prismaField({
      type: [WebhookDelivery],
      resolve: (query, page, _args, ctx) =>
        ctx.db.webhookDelivery.findMany({
          ...query,
          where: { webhook_id: page.webhookId },
          orderBy: [{ created_at: 'desc' }, { id: 'desc' }],
          skip: page.offset,
          take: page.limit,
        }),
    }),
    pagination: t.field({
      type: OffsetPagination,
      resolve: async (page, _args, ctx) =>
        offsetPagination(await ctx.db.webhookDelivery.count({ where: { webhook_id: page.webhookId } }), page),
    }),
  }),
});
