// The two queues behind webhooks. `events.dispatch` (one job per event, queued by emit) fans the event
// out to the hooks subscribed to it: one `webhooks.deliver` job per hook. Each deliver job attempt
// sends one signed POST, logs it as a delivery row and tells the runner what next: done (2xx), retry
// on the schedule or after the receiver's Retry-After, or stop (410 disables the hook; schedule spent).
import { createHash } from 'node:crypto';
import type { Event, Webhook } from '../../generated/prisma/client.js';
import { Prisma } from '../../generated/prisma/client.js';
import { TenantClients, type TenantDb } from '../../db/tenant-scope.js';
import { EVENTS_DISPATCH_QUEUE, type EventsDispatchPayload } from '../../events/emit.js';
import { enqueueMany } from '../../jobs/enqueue.js';
import { countWebhookAttempt } from '../../observability/metrics.js';
import { defineQueue, FailJob, RetryJob, type JobInfo } from '../../jobs/queue.js';
import type { QueueDeps } from '../../jobs/registry.js';
import { attemptDelivery, type DeliveryResult } from './deliver.js';
import { DEFAULT_RETRY_SCHEDULE, nextAttemptDelay } from './schedule.js';

export const DELIVER_QUEUE = 'webhooks.deliver';
/** Attempts in flight at once to one webhook, across every process. */
export const DELIVERIES_PER_WEBHOOK = 4;

export interface DeliverPayload {
  [key: string]: unknown;
  tenant_id: string;
  webhook_id: string;
  event_id: string;
  /** A redelivery's: the id its first attempt's delivery row gets, which the redelivery answered with. */
  delivery_id?: string;
}

export type DeliveryStatus = 'succeeded' | 'retrying' | 'failed';

/** `webhook-id`: derived from the event and the hook, so every attempt and every redelivery carries the same one. */
export function messageId(eventId: string, webhookId: string): string {
  return `msg_${createHash('sha256').update(`${eventId}:${webhookId}`).digest('base64url').slice(0, 27)}`;
}

/** A job queued by an older version names only the event: its organisation, by the event's id alone. */
async function organisationOf(db: QueueDeps['db'], eventId: string): Promise<string | undefined> {
  return (await db.prisma.event.findFirst({ where: { id: eventId }, select: { tenant_id: true } }))?.tenant_id;
}

/** The events.dispatch handler: the hooks active and subscribed to the event's type when it was raised. */
export const dispatchQueue = ({ db, config }: QueueDeps) => {
  const tenants = new TenantClients(db.prisma);
  const schedule = config.webhookRetrySchedule ?? DEFAULT_RETRY_SCHEDULE;
  return defineQueue<EventsDispatchPayload>({
    name: EVENTS_DISPATCH_QUEUE,
    handler: async ({ event_id, ...payload }) => {
      const tenant_id = payload.tenant_id ?? (await organisationOf(db, event_id));
      if (!tenant_id) return;
      const scoped = tenants.for(tenant_id);
      const event = await scoped.event.findUnique({ where: { id: event_id }, select: { type: true, created_at: true } });
      if (!event) return;
      // active_since <= the event's time: a hook inactive when the event was raised never gets it.
      const hooks = await scoped.webhook.findMany({
        where: { active: true, events: { has: event.type }, active_since: { lte: event.created_at } },
        select: { id: true },
      });
      const payloads: DeliverPayload[] = hooks.map((h) => ({ tenant_id, webhook_id: h.id, event_id }));
      await enqueueMany(scoped, DELIVER_QUEUE, payloads, { delayMs: schedule[0] ?? 0 });
    },
  });
};

/** The webhooks.deliver handler. */
export const deliveryQueue = ({ db, config }: QueueDeps) => {
  const tenants = new TenantClients(db.prisma);
  const schedule = config.webhookRetrySchedule ?? DEFAULT_RETRY_SCHEDULE;
  return defineQueue<DeliverPayload>({
    name: DELIVER_QUEUE,
    // Attempts are scheduled by the handler (RetryJob); these delays apply only when the handler itself
    // fails (the database is unreachable).
    retryDelays: schedule.slice(1),
    maxAttempts: Math.max(1, schedule.length),
    // One slot stays free for the other queues (event fan-out) while receivers are slow.
    concurrency: Math.max(1, config.workerConcurrency - 1),
    // A slow or dead receiver holds at most DELIVERIES_PER_WEBHOOK slots, in all processes; the other
    // hooks' deliveries are claimed in turns beside it.
    fairness: { key: 'webhook_id', perKey: DELIVERIES_PER_WEBHOOK },
    handler: (payload, job) => deliver(tenants.for(payload.tenant_id), payload, job, { schedule, allowPrivate: config.webhookAllowPrivateUrls }),
  });
};

async function deliver(db: TenantDb, payload: DeliverPayload, job: JobInfo, options: { schedule: readonly number[]; allowPrivate: boolean }) {
  const hook = await db.webhook.findUnique({ where: { id: payload.webhook_id } });
  // Deleted or deactivated since: its pending deliveries end.
  if (!hook?.active) return;
  const event = await db.event.findUnique({ where: { id: payload.event_id } });
  if (!event) return;
  const result = await sendEvent(hook, event, options.allowPrivate);
  const deliveryId = job.attempt === 1 ? payload.delivery_id : undefined;
  const log = (status: DeliveryStatus, delayMs: number | null = null) => logAttempt(db, { hook: hook.id, event: event.id, type: event.type }, status, result, delayMs, deliveryId);

  if (result.ok) {
    await log('succeeded');
    return;
  }
  if (result.disable) {
    await log('failed');
    await db.webhook.update({ where: { id: hook.id }, data: { active: false, active_since: null } });
    throw new FailJob(`${result.error}: webhook desativado`);
  }
  const delayMs = nextAttemptDelay(job.attempt, options.schedule, result.retryAfterMs);
  if (delayMs === null) {
    await log('failed');
    throw new FailJob(result.error ?? 'falha na entrega');
  }
  await log('retrying', delayMs);
  throw new RetryJob(result.error ?? 'falha na entrega', delayMs);
}

/** One signed POST of an event to a hook (both secrets during a regeneration's grace window). */
function sendEvent(hook: Webhook, event: Event, allowPrivate: boolean): Promise<DeliveryResult> {
  const now = Date.now();
  const secrets = [hook.secret];
  if (hook.previous_secret && hook.previous_secret_expires_at && hook.previous_secret_expires_at.getTime() > now) secrets.push(hook.previous_secret);
  const body = JSON.stringify({ type: event.type, timestamp: event.created_at.toISOString(), data: event.data });
  return attemptDelivery({ url: hook.url, msgId: messageId(event.id, hook.id), timestamp: Math.floor(now / 1000), body, secrets, allowPrivate });
}

/**
 * The test event (POST /backend/webhooks/{id}/test): one attempt, now, logged like any other and not
 * retried; a 410 does not disable the hook (it is a manual check). Returns the delivery row's id.
 */
export async function deliverOnce(db: TenantDb, hook: Webhook, event: Event, allowPrivate: boolean): Promise<string> {
  const result = await sendEvent(hook, event, allowPrivate);
  return logAttempt(db, { hook: hook.id, event: event.id, type: event.type }, result.ok ? 'succeeded' : 'failed', result, null);
}

/** One delivery row; `attempt` continues the count of this event to this hook (redeliveries included). */
async function logAttempt(
  db: TenantDb,
  ids: { hook: string; event: string; type: string },
  status: DeliveryStatus,
  result: DeliveryResult,
  delayMs: number | null,
  id?: string,
): Promise<string> {
  countWebhookAttempt(status);
  const nextAttemptAt = delayMs === null ? null : new Date(Date.now() + delayMs);
  const [row] = await db.$tenantQuery<{ id: string }[]>(
    (tenant) => Prisma.sql`
    INSERT INTO webhook_deliveries (id, tenant_id, webhook_id, event_id, event_type, attempt, status, response_status, error, duration_ms, next_attempt_at)
    SELECT COALESCE(${id ?? null}::uuid, gen_random_uuid()), ${tenant}, ${ids.hook}::uuid, ${ids.event}::uuid, ${ids.type}, COALESCE(max(attempt), 0) + 1, ${status},
      ${result.status ?? null}::int, ${result.error ?? null}::text, ${result.durationMs}::int, ${nextAttemptAt}::timestamptz
    FROM webhook_deliveries WHERE tenant_id = ${tenant} AND webhook_id = ${ids.hook}::uuid AND event_id = ${ids.event}::uuid
    RETURNING id`,
  );
  return row.id;
}
