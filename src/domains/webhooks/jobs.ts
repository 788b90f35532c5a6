// The two queues behind webhooks. `events.dispatch` (one job per event, queued by emit) fans the event
// out to the hooks subscribed to it: one `webhooks.deliver` job per hook. Each attempt of a deliver job
// sends one signed POST, is logged as a delivery row and tells the runner what next: done (2xx), retry
// on the schedule or after the receiver's Retry-After, or stop (410 disables the hook; schedule spent).
// Both queues run in batches (src/jobs/README.md): a claim, a read, a log INSERT and an outcome statement
// serve many jobs, and a webhook's batch sends its attempts over a kept-alive connection (deliver.ts).
import { secrets } from '../../secrets.js';
import { createHash } from 'node:crypto';
import type { Event, Webhook } from '../../generated/prisma/client.js';
import { Prisma } from '../../generated/prisma/client.js';
import type { TenantDb } from '../../db/tenant-scope.js';
import { tenantIs } from '../../tenant-sql.js';
import { EVENTS_DISPATCH, type EventsDispatchPayload } from '../../events/emit.js';
import { JOBS_CHANNEL } from '../../jobs/enqueue.js';
import { countWebhookAttempt } from '../../observability/metrics.js';
import { defineQueue, fairQueue, FailJob, RetryJob, type BatchJob, type BatchOutcome, type QueueDeps } from '../../jobs/queue.js';
import { attemptDelivery, type DeliveryResult } from './deliver.js';
import { DEFAULT_RETRY_SCHEDULE, nextAttemptDelay } from './schedule.js';

/** Deliveries, grouped by their webhook for fair claims. */
export const DELIVER_QUEUE = fairQueue('webhooks.deliver', 'webhook_id');
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

/** Deliver jobs claimed at once for one webhook: one read, one log INSERT and one outcome statement for all. */
export const DELIVERY_BATCH = 50;
/**
 * A batch sends its attempts one after another (it holds one of its webhook's DELIVERIES_PER_WEBHOOK
 * slots); past this it gives back the jobs it has not tried, so a slow receiver's backlog is dealt out
 * again over all its slots instead of waiting behind one.
 */
export const DELIVERY_BATCH_BUDGET_MS = 1_000;
/** events.dispatch jobs fanned out by one statement. */
export const DISPATCH_BATCH = 200;
/** Fan-outs at once in a process: one organisation's, and another's beside it. */
export const DISPATCH_CONCURRENCY = 2;

// The deliver jobs of the events, one per hook active (grouped by their webhook, as enqueue groups a
// redelivery by DELIVER_QUEUE's field), subscribed to the event's type and already active
// when it was raised (active_since <= the event's time), with the commit notification. A job queued by a
// version before the organisation rode along names only the event: its organisation, by the event's id.
// Each event is read by its key in a LATERAL subquery the planner cannot merge (OFFSET 0): as a join, an
// unanalysed or skewed table let it match on the organisation alone and scan all of its events per row,
// and the legacy branch (an OR in the join) scanned the whole table. The legacy branch runs only for a
// job without its organisation (a one-time filter).
const FAN_OUT = `
  WITH job AS (
    INSERT INTO jobs (queue, payload, run_at, group_key)
    SELECT $3, jsonb_build_object('tenant_id', e.tenant_id, 'webhook_id', w.id, 'event_id', e.id), now() + $4::float8 * interval '1 millisecond',
      w.id::text
    FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS p(event_id, tenant_id, n)
    CROSS JOIN LATERAL (
      SELECT e.id, e.tenant_id, e.type, e.created_at FROM events e WHERE e.tenant_id = p.tenant_id AND e.id = p.event_id
      UNION ALL
      SELECT e.id, e.tenant_id, e.type, e.created_at FROM events e WHERE p.tenant_id IS NULL AND e.id = p.event_id
      OFFSET 0) e
    JOIN webhooks w ON w.tenant_id = e.tenant_id AND w.active AND e.type = ANY(w.events) AND w.active_since <= e.created_at
    ORDER BY p.n, w.id
    RETURNING id)
  SELECT pg_notify('${JOBS_CHANNEL}', '')::text AS notified FROM (SELECT 1 FROM job LIMIT 1) AS queued`;

/** The events.dispatch handler: a batch of events fanned out to their hooks in one statement. */
export const dispatchQueue = ({ db, config }: QueueDeps) => {
  const schedule = config.webhookRetrySchedule ?? DEFAULT_RETRY_SCHEDULE;
  return defineQueue<EventsDispatchPayload>({
    // Grouped by organisation, one fan-out of an organisation at a time (across processes), and a
    // second slot for another organisation's events: a flood of one is fanned out beside another's
    // event, not in front of it. No more at once in a process: each fan-out inserts up to DISPATCH_BATCH
    // × hooks jobs at the end of the same index, and ten at once (a backlog claimed in one pass) queued
    // behind each other's page locks: 50-340 ms each instead of 3-9 once the table held the dead rows of
    // earlier deliveries.
    name: EVENTS_DISPATCH,
    fairness: { perKey: 1 },
    concurrency: DISPATCH_CONCURRENCY,
    batch: {
      size: DISPATCH_BATCH,
      handler: async (jobs) => {
        const events = jobs.map(({ payload }) => payload);
        await db.sql.query(FAN_OUT, [
          events.map((e) => e.event_id),
          events.map((e) => e.tenant_id ?? null),
          DELIVER_QUEUE.queue,
          schedule[0] ?? 0,
        ]);
        return jobs.map(() => 'done' as const);
      },
    },
  });
};

/** The webhooks.deliver handler: batches of one webhook's jobs. */
export const deliveryQueue = ({ db, config }: QueueDeps) => {
  const schedule = config.webhookRetrySchedule ?? DEFAULT_RETRY_SCHEDULE;
  return defineQueue<DeliverPayload>({
    name: DELIVER_QUEUE,
    // Attempts are scheduled by the handler (RetryJob); these delays apply only when the handler itself
    // fails (the database is unreachable).
    retryDelays: schedule.slice(1),
    maxAttempts: Math.max(1, schedule.length),
    // Slots stay free for the event fan-outs (DISPATCH_CONCURRENCY) while receivers are slow.
    concurrency: Math.max(1, config.workerConcurrency - DISPATCH_CONCURRENCY),
    // A slow or dead receiver holds at most DELIVERIES_PER_WEBHOOK slots (batches, each sending one
    // attempt at a time), in all processes; the other hooks' deliveries are claimed in turns beside it.
    fairness: { perKey: DELIVERIES_PER_WEBHOOK },
    batch: {
      size: DELIVERY_BATCH,
      handler: (jobs, signal) => deliverBatch(db.sql, jobs, signal, { schedule, allowPrivate: config.webhookAllowPrivateUrls }),
    },
  });
};

interface Target {
  url: string;
  active: boolean;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  type: string;
  data: Prisma.JsonValue;
  created_at: Date;
}

// The hook and the event of each job (n: the job's place in the batch); a deleted hook or event has no row.
// Each is read by its key in a LATERAL subquery the planner cannot merge (OFFSET 0): as joins, before the
// tables were analysed, it matched events on the organisation alone (the join's equivalence with the hook's
// tenant_id) and read all of the organisation's events for every job: 25 ms a batch at 10,000 events,
// growing with the table.
const TARGETS = `
  SELECT p.n::int AS n, w.url, w.active, w.secret, w.previous_secret, w.previous_secret_expires_at, e.type, e.data, e.created_at
  FROM unnest($1::uuid[], $2::uuid[], $3::uuid[]) WITH ORDINALITY AS p(tenant_id, webhook_id, event_id, n)
  CROSS JOIN LATERAL (
    SELECT w.url, w.active, w.secret, w.previous_secret, w.previous_secret_expires_at FROM webhooks w
    WHERE w.tenant_id = p.tenant_id AND w.id = p.webhook_id OFFSET 0) w
  CROSS JOIN LATERAL (
    SELECT e.type, e.data, e.created_at FROM events e WHERE e.tenant_id = p.tenant_id AND e.id = p.event_id OFFSET 0) e`;

async function deliverBatch(
  sql: QueueDeps['db']['sql'],
  jobs: BatchJob<DeliverPayload>[],
  signal: AbortSignal,
  options: { schedule: readonly number[]; allowPrivate: boolean },
): Promise<BatchOutcome[]> {
  const payloads = jobs.map((j) => j.payload);
  const rows = await sql.query<Target & { n: number }>(TARGETS, [
    payloads.map((p) => p.tenant_id),
    payloads.map((p) => p.webhook_id),
    payloads.map((p) => p.event_id),
  ]);
  const targets = new Map(rows.map((row) => [row.n - 1, row]));
  const outcomes: BatchOutcome[] = [];
  const attempts: Attempt[] = [];
  const disabled = new Set<string>();
  const urls = new Map<string, URL | string>(); // a batch is one hook's: its URL parsed once
  const started = performance.now();
  for (const [i, { payload, job }] of jobs.entries()) {
    const target = targets.get(i);
    // Deleted or deactivated since (a 410 earlier in this batch included): its pending deliveries end.
    if (!target?.active || disabled.has(`${payload.tenant_id}:${payload.webhook_id}`)) {
      outcomes.push('done');
      continue;
    }
    // Out of time, or stopping: the rest is claimed again, its attempts not counted.
    if (signal.aborted || (attempts.length > 0 && performance.now() - started > DELIVERY_BATCH_BUDGET_MS)) {
      outcomes.push('release');
      continue;
    }
    let url = urls.get(target.url);
    if (url === undefined) urls.set(target.url, (url = URL.canParse(target.url) ? new URL(target.url) : target.url));
    const event = { type: target.type, created_at: target.created_at, data: target.data, id: payload.event_id, hook: payload.webhook_id };
    const result = await sendEvent({ ...target, url }, event, options.allowPrivate);
    const attempt = { payload, type: target.type, result, deliveryId: job.attempt === 1 ? payload.delivery_id : undefined };
    if (result.ok) {
      attempts.push({ ...attempt, status: 'succeeded', delayMs: null });
      outcomes.push('done');
    } else if (result.disable) {
      attempts.push({ ...attempt, status: 'failed', delayMs: null });
      disabled.add(`${payload.tenant_id}:${payload.webhook_id}`);
      outcomes.push(new FailJob(`${result.error}: webhook desativado`));
    } else {
      const delayMs = nextAttemptDelay(job.attempt, options.schedule, result.retryAfterMs);
      attempts.push({ ...attempt, status: delayMs === null ? 'failed' : 'retrying', delayMs });
      outcomes.push(
        delayMs === null ? new FailJob(result.error ?? 'falha na entrega') : new RetryJob(result.error ?? 'falha na entrega', delayMs),
      );
    }
  }
  await logAttempts(sql, attempts);
  if (disabled.size) {
    const hooks = [...disabled].map((key) => key.split(':'));
    await sql.query(DISABLE, [hooks.map(([tenant]) => tenant), hooks.map(([, hook]) => hook)]);
  }
  return outcomes;
}

const DISABLE = `
  UPDATE webhooks w SET active = false, active_since = NULL, updated_at = now()
  FROM unnest($1::uuid[], $2::uuid[]) AS h(tenant_id, id)
  WHERE w.tenant_id = h.tenant_id AND w.id = h.id`;

interface Attempt {
  payload: DeliverPayload;
  type: string;
  status: DeliveryStatus;
  result: DeliveryResult;
  delayMs: number | null;
  /** A redelivery's first attempt: the id it answered with. */
  deliveryId?: string;
}

// Delivery rows; `attempt` continues the count of each event to each hook (redeliveries included; two
// jobs of one event and hook in one batch count on from each other).
const LOG_ATTEMPTS = `
  INSERT INTO webhook_deliveries (id, tenant_id, webhook_id, event_id, event_type, attempt, status, response_status, error, duration_ms, next_attempt_at)
  SELECT COALESCE(a.id, gen_random_uuid()), a.tenant_id, a.webhook_id, a.event_id, a.event_type,
    COALESCE((SELECT max(d.attempt) FROM webhook_deliveries d WHERE d.tenant_id = a.tenant_id AND d.webhook_id = a.webhook_id AND d.event_id = a.event_id), 0)
      + row_number() OVER (PARTITION BY a.tenant_id, a.webhook_id, a.event_id ORDER BY a.n),
    a.status, a.response_status, a.error, a.duration_ms, now() + a.delay_ms * interval '1 millisecond'
  FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::text[], $7::int[], $8::text[], $9::int[], $10::float8[])
    WITH ORDINALITY AS a(id, tenant_id, webhook_id, event_id, event_type, status, response_status, error, duration_ms, delay_ms, n)`;

async function logAttempts(sql: QueueDeps['db']['sql'], attempts: Attempt[]) {
  if (!attempts.length) return;
  for (const a of attempts) countWebhookAttempt(a.status);
  await sql.query(LOG_ATTEMPTS, [
    attempts.map((a) => a.deliveryId ?? null),
    attempts.map((a) => a.payload.tenant_id),
    attempts.map((a) => a.payload.webhook_id),
    attempts.map((a) => a.payload.event_id),
    attempts.map((a) => a.type),
    attempts.map((a) => a.status),
    attempts.map((a) => a.result.status ?? null),
    attempts.map((a) => a.result.error ?? null),
    attempts.map((a) => a.result.durationMs),
    attempts.map((a) => a.delayMs),
  ]);
}

type HookSecrets = Pick<Webhook, 'secret' | 'previous_secret' | 'previous_secret_expires_at'> & { url: string | URL };

/**
 * One signed POST of an event to a hook (both secrets during a regeneration's grace window). The body's
 * timestamp is the event's, so every attempt sends the same bytes.
 */
function sendEvent(
  hook: HookSecrets,
  event: Pick<Event, 'type' | 'created_at' | 'data'> & { id: string; hook: string },
  allowPrivate: boolean,
): Promise<DeliveryResult> {
  const now = Date.now();
  // Stored sealed (src/secrets.ts): opened for this attempt only.
  const box = secrets();
  const signing = [box.open(hook.secret)];
  if (hook.previous_secret && hook.previous_secret_expires_at && hook.previous_secret_expires_at.getTime() > now)
    signing.push(box.open(hook.previous_secret));
  const body = JSON.stringify({ type: event.type, timestamp: event.created_at.toISOString(), data: event.data });
  return attemptDelivery({
    url: hook.url,
    msgId: messageId(event.id, event.hook),
    timestamp: Math.floor(now / 1000),
    body,
    secrets: signing,
    allowPrivate,
  });
}

/**
 * The test event (POST /backend/webhooks/{id}/test): one attempt, now, logged like any other and not
 * retried; a 410 does not disable the hook (it is a manual check). Returns the delivery row's id.
 */
export async function deliverOnce(db: TenantDb, hook: Webhook, event: Event, allowPrivate: boolean): Promise<string> {
  const result = await sendEvent(hook, { ...event, hook: hook.id }, allowPrivate);
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
    FROM webhook_deliveries WHERE ${tenantIs(tenant)} AND webhook_id = ${ids.hook}::uuid AND event_id = ${ids.event}::uuid
    RETURNING id`,
  );
  return row.id;
}
