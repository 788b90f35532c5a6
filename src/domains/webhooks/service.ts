// Webhooks (envelope style, owner/admin): registration, changes, secret regeneration, the delivery log
// and redelivery. Deliveries themselves run as background jobs (./jobs.ts).
import type { Context } from '../../context/context.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { AppError, invalidInput, notFound, invalidField } from '../../errors.js';
import { isEventType } from '../../events/types.js';
import { enqueue } from '../../jobs/enqueue.js';
import { Prisma } from '../../generated/prisma/client.js';
import { offsetWindow, type Selection } from '../common/types.js';
import { randomUUID } from 'node:crypto';
import { eventTypes, subscribableEventTypes, TEST_EVENT } from './event-types.js';
import { DELIVER_QUEUE, deliverOnce, type DeliverPayload } from './jobs.js';
import { secrets } from '../../secrets.js';
import { generateSecret } from './signing.js';
import { validateWebhookUrl } from './url-guard.js';

/** Webhooks of one organisation, at most: each event is fanned out to every one of them. */
export const WEBHOOKS_MAX = 50;

/** After a regeneration the previous secret keeps signing for this long. */
export const SECRET_GRACE_MS = 24 * 60 * 60 * 1000;

function eventKinds(events: string[] | null | undefined): string[] {
  if (!events?.length) throw invalidField('events', `deve listar ao menos um tipo de evento (${subscribableEventTypes().join(', ')})`);
  const unknown = events.filter((e) => !isEventType(e));
  if (unknown.length)
    throw invalidField('events', `tem tipos desconhecidos: ${unknown.join(', ')}. Tipos aceitos: ${subscribableEventTypes().join(', ')}`);
  return [...new Set(events)];
}

function webhookUrl(ctx: Context, url: string | null | undefined): Promise<string> {
  if (url == null) throw invalidField('url', 'é obrigatório');
  return validateWebhookUrl(url, { allowPrivate: ctx.config.webhookAllowPrivateUrls });
}

function requireBoolean(field: string, value: boolean | null): boolean {
  if (value === null) throw invalidField(field, 'deve ser true ou false');
  return value;
}

async function findWebhook(db: Pick<TenantTx, 'webhook'>, id: string) {
  const hook = await db.webhook.findUnique({ where: { id } });
  if (!hook) throw notFound('Webhook');
  return hook;
}

export async function createWebhook(ctx: Context, input: { url: string; events: string[]; active?: boolean | null }) {
  const url = await webhookUrl(ctx, input.url);
  const events = eventKinds(input.events);
  const active = input.active ?? true;
  // Stored sealed (src/secrets.ts); the answer shows it in clear, once.
  const secret = generateSecret();
  const hook = await ctx.db.$transaction(async (tx) => {
    // Concurrent registrations of one organisation count one after the other, so the cap holds.
    await tx.$tenantQuery(
      (tenant) => Prisma.sql`SELECT pg_advisory_xact_lock(hashtext('funil.webhooks:' || ${tenant}::text))::text AS locked`,
    );
    if ((await tx.webhook.count()) >= WEBHOOKS_MAX)
      throw invalidInput(`Uma organização aceita no máximo ${WEBHOOKS_MAX} webhooks`, {
        details: [{ field: 'url', message: `no máximo ${WEBHOOKS_MAX} webhooks por organização` }],
      });
    return tx.webhook.create({ data: { url, events, active, active_since: active ? new Date() : null, secret: secrets().seal(secret) } });
  });
  return { ...hook, secret };
}

export function listWebhooks(ctx: Context, query: Selection = {}) {
  return ctx.db.webhook.findMany({ ...query, orderBy: [{ created_at: 'asc' }, { id: 'asc' }] });
}

export async function getWebhook(ctx: Context, id: string, query: Selection = {}) {
  const hook = await ctx.db.webhook.findUnique({ ...query, where: { id } });
  if (!hook) throw notFound('Webhook');
  return hook;
}

/** `url`, `events` and `active`; omitted fields are unchanged. Deactivating drops the pending deliveries. */
export async function updateWebhook(
  ctx: Context,
  id: string,
  input: { url?: string | null; events?: string[] | null; active?: boolean | null },
  query: Selection = {},
) {
  const url = input.url === undefined ? undefined : await webhookUrl(ctx, input.url);
  const events = input.events === undefined ? undefined : eventKinds(input.events);
  const active = input.active === undefined ? undefined : requireBoolean('active', input.active);
  await ctx.db.$transaction(async (tx) => {
    const hook = await findWebhook(tx, id);
    // Reactivated: only events raised from now on are sent (compared with events.created_at).
    const activeSince = active === false ? { active_since: null } : active && !hook.active ? { active_since: new Date() } : {};
    await tx.webhook.update({ where: { id }, data: { url, events, active, ...activeSince } });
  });
  return ctx.db.webhook.findUniqueOrThrow({ ...query, where: { id } });
}

export async function deleteWebhook(ctx: Context, id: string) {
  const { count } = await ctx.db.webhook.deleteMany({ where: { id } });
  if (count === 0) throw notFound('Webhook');
  return true;
}

/** A new secret; the previous one keeps signing (a second signature) for SECRET_GRACE_MS. */
export async function regenerateSecret(ctx: Context, id: string) {
  const secret = generateSecret();
  await ctx.db.$transaction(async (tx) => {
    const hook = await findWebhook(tx, id);
    await tx.webhook.update({
      where: { id },
      data: {
        secret: secrets().seal(secret),
        previous_secret: hook.secret,
        previous_secret_expires_at: new Date(Date.now() + SECRET_GRACE_MS),
      },
    });
  });
  return { secret };
}

/** The delivery log of a webhook, newest first, one row per attempt. */
export async function deliveryPage(ctx: Context, id: string, args: { limit?: number | null; offset?: number | null }) {
  await findWebhook(ctx.db, id);
  return { webhookId: id, ...offsetWindow(args.limit, args.offset) };
}

/** Every event type, with its description and its body's JSON Schema. */
export function listEventTypes(_ctx: Context) {
  return eventTypes();
}

/**
 * Sends a signed `webhook.test` event to the hook now (even an inactive one: it is how a receiver is
 * checked before turning it on). Returns its delivery's id: the receiver's status, error, duration.
 */
export async function sendTestEvent(ctx: Context, id: string): Promise<string> {
  const hook = await findWebhook(ctx.db, id);
  const event = await ctx.db.event.create({
    data: { type: TEST_EVENT, data: { webhook_id: hook.id, message: 'Evento de teste do Funil' } },
  });
  return deliverOnce(ctx.db, hook, event, ctx.config.webhookAllowPrivateUrls);
}

/**
 * Queues the delivery's event to its webhook again: a new attempt with the same `webhook-id`. Answers
 * with the id the new delivery row will have once its attempt runs.
 */
export async function redeliver(ctx: Context, id: string, deliveryId: string): Promise<string> {
  const hook = await findWebhook(ctx.db, id);
  const delivery = await ctx.db.webhookDelivery.findFirst({ where: { id: deliveryId, webhook_id: id }, select: { event_id: true } });
  if (!delivery) throw notFound('Entrega');
  if (!hook.active) throw new AppError('CONFLICT', 'O webhook está inativo: ative-o antes de reenviar');
  const payload: DeliverPayload = { tenant_id: ctx.db.$tenantId, webhook_id: id, event_id: delivery.event_id, delivery_id: randomUUID() };
  await enqueue(ctx.db, DELIVER_QUEUE, payload);
  return payload.delivery_id!;
}
