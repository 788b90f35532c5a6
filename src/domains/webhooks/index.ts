// Webhooks: registration, secrets, the delivery log and redelivery (envelope style, webhooks.manage).
// Deliveries run as background jobs (./jobs.ts).
import { defineDomain } from '../manifest.js';
import { deliveryQueue, dispatchQueue } from './jobs.js';
import './fields.js';

export const webhooksDomain = defineDomain({
  name: 'webhooks',
  description:
    "Webhook registrations, secrets, event types, the delivery log, test events and redelivery (envelope style). The deliveries themselves are in the document's `webhooks` section.",
  permissions: [
    {
      name: 'webhooks.manage',
      roles: ['owner', 'admin'],
      description: 'Register, change and delete webhooks; read their deliveries and redeliver.',
    },
  ],
  queues: [dispatchQueue, deliveryQueue],
  routes: [
    { method: 'GET', path: '/webhooks', field: 'Query.webhooks', style: 'envelope', access: 'webhooks.manage', summary: 'List webhooks' },
    {
      method: 'POST',
      path: '/webhooks',
      field: 'Mutation.createWebhook',
      style: 'envelope',
      status: 201,
      access: 'webhooks.manage',
      summary: 'Register a webhook (the answer shows its secret once)',
    },
    {
      method: 'GET',
      path: '/webhooks/event-types',
      field: 'Query.webhookEventTypes',
      style: 'envelope',
      access: 'webhooks.manage',
      summary: 'Event types and their payload schemas',
    },
    {
      method: 'POST',
      path: '/webhooks/:id/test',
      field: 'Mutation.testWebhook',
      style: 'envelope',
      access: 'webhooks.manage',
      summary: 'Send a signed webhook.test event now; answers with the delivery',
    },
    {
      method: 'GET',
      path: '/webhooks/:id',
      field: 'Query.webhook',
      style: 'envelope',
      access: 'webhooks.manage',
      summary: 'Get a webhook',
    },
    {
      method: 'PUT',
      path: '/webhooks/:id',
      field: 'Mutation.updateWebhook',
      style: 'envelope',
      access: 'webhooks.manage',
      summary: 'Change a webhook’s url, events or active flag',
    },
    {
      method: 'DELETE',
      path: '/webhooks/:id',
      field: 'Mutation.deleteWebhook',
      style: 'envelope',
      status: 204,
      access: 'webhooks.manage',
      summary: 'Delete a webhook',
    },
    {
      method: 'POST',
      path: '/webhooks/:id/regenerate-secret',
      field: 'Mutation.regenerateWebhookSecret',
      style: 'envelope',
      access: 'webhooks.manage',
      summary: 'Regenerate the signing secret',
    },
    {
      method: 'GET',
      path: '/webhooks/:id/deliveries',
      field: 'Query.webhookDeliveries',
      style: 'envelope',
      wrap: 'spread',
      access: 'webhooks.manage',
      summary: 'Delivery log, newest first',
    },
    {
      method: 'POST',
      path: '/webhooks/:id/deliveries/:delivery_id/redeliver',
      field: 'Mutation.redeliverWebhookDelivery',
      style: 'envelope',
      wrap: 'none',
      access: 'webhooks.manage',
      summary: 'Queue a delivery’s event again',
    },
  ],
});
