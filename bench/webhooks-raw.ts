// The webhooks baseline: a hand-written loop doing what the delivery path does, against the same tables
// and on the same connection pool: claim events.dispatch jobs with a lease (FOR UPDATE SKIP LOCKED),
// fan them out as webhooks.deliver jobs, claim those in batches, send each signed POST over a keep-alive
// undici Pool of DELIVERIES_PER_WEBHOOK connections, log the attempts in one INSERT and delete the jobs.
// No fairness, no retries, no outcome bookkeeping beyond success: what the work costs by hand. Its
// statements have the shapes the delivery path's have, the ones whose plans hold whatever the jobs
// table's statistics say (src/jobs/runner.ts), so the ratio compares the work, not the planner's luck.
import { Pool } from 'undici';
import type { Database } from '../src/db/client.js';
import { signatureHeader } from '../src/domains/webhooks/signing.js';
import { DELIVER_QUEUE, DELIVERIES_PER_WEBHOOK, messageId } from '../src/domains/webhooks/jobs.js';
import { secrets } from '../src/secrets.js';

const BATCH = 50;
const IDLE_MS = 5;

// Whatever the group (emit groups dispatch jobs by organisation; this loop's deliver jobs have none):
// first come, first served.
const claim = (queue: string) => `
  UPDATE jobs SET attempts = attempts + 1, locked_by = 'raw', locked_until = now() + interval '30 seconds'
  WHERE id = ANY(ARRAY(
    SELECT id FROM jobs WHERE queue = '${queue}' AND failed_at IS NULL AND run_at <= now() AND (locked_until IS NULL OR locked_until <= now())
    ORDER BY run_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED))
  RETURNING id::text AS id, payload`;

const FAN_OUT = `
  INSERT INTO jobs (queue, payload)
  SELECT '${DELIVER_QUEUE.queue}', jsonb_build_object('tenant_id', e.tenant_id, 'webhook_id', w.id, 'event_id', e.id)
  FROM unnest($1::uuid[], $2::uuid[]) AS p(tenant_id, id)
  CROSS JOIN LATERAL (SELECT e.* FROM events e WHERE e.tenant_id = p.tenant_id AND e.id = p.id OFFSET 0) e
  JOIN webhooks w ON w.tenant_id = e.tenant_id AND w.active AND e.type = ANY(w.events) AND w.active_since <= e.created_at`;

const TARGETS = `
  SELECT j.id, w.url, w.secret, e.type, e.data, e.created_at, w.id::text AS webhook_id, e.id::text AS event_id, e.tenant_id::text AS tenant_id
  FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[]) AS j(id, tenant_id, webhook_id, event_id)
  CROSS JOIN LATERAL (SELECT w.* FROM webhooks w WHERE w.tenant_id = j.tenant_id AND w.id = j.webhook_id OFFSET 0) w
  CROSS JOIN LATERAL (SELECT e.* FROM events e WHERE e.tenant_id = j.tenant_id AND e.id = j.event_id OFFSET 0) e`;

const LOG = `
  INSERT INTO webhook_deliveries (tenant_id, webhook_id, event_id, event_type, attempt, status, response_status, duration_ms)
  SELECT a.tenant_id, a.webhook_id, a.event_id, a.event_type,
    COALESCE((SELECT max(d.attempt) FROM webhook_deliveries d WHERE d.tenant_id = a.tenant_id AND d.webhook_id = a.webhook_id AND d.event_id = a.event_id), 0) + 1,
    'succeeded', a.response_status, a.duration_ms
  FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::int[], $6::int[]) AS a(tenant_id, webhook_id, event_id, event_type, response_status, duration_ms)`;

const DONE = `DELETE FROM jobs WHERE id = ANY($1::uuid[])`;

type Claimed = { id: string; payload: Record<string, string> };

/** Starts the loops; `stop()` ends them after their current batch. */
export function startRawDelivery(db: Pick<Database, 'sql'>): { stop(): Promise<void> } {
  let stopping = false;
  const pools = new Map<string, Pool>();
  const poolOf = (origin: string) => {
    let pool = pools.get(origin);
    if (!pool) pools.set(origin, (pool = new Pool(origin, { connections: DELIVERIES_PER_WEBHOOK })));
    return pool;
  };
  const idle = () => new Promise((resolve) => setTimeout(resolve, IDLE_MS));

  const dispatcher = async () => {
    while (!stopping) {
      const jobs = await db.sql.query<Claimed>(claim('events.dispatch'), []);
      if (!jobs.length) {
        await idle();
        continue;
      }
      await db.sql.query(FAN_OUT, [jobs.map((j) => j.payload.tenant_id), jobs.map((j) => j.payload.event_id)]);
      await db.sql.query(DONE, [jobs.map((j) => j.id)]);
    }
  };

  const deliverer = async () => {
    while (!stopping) {
      const jobs = await db.sql.query<Claimed>(claim(DELIVER_QUEUE.queue), []);
      if (!jobs.length) {
        await idle();
        continue;
      }
      const targets = await db.sql.query<{
        url: string;
        secret: string;
        type: string;
        data: unknown;
        created_at: Date;
        webhook_id: string;
        event_id: string;
        tenant_id: string;
      }>(TARGETS, [
        jobs.map((j) => j.id),
        jobs.map((j) => j.payload.tenant_id),
        jobs.map((j) => j.payload.webhook_id),
        jobs.map((j) => j.payload.event_id),
      ]);
      const sent: { target: (typeof targets)[number]; status: number; ms: number }[] = [];
      for (const target of targets) {
        const started = performance.now();
        const url = new URL(target.url);
        const body = Buffer.from(JSON.stringify({ type: target.type, timestamp: target.created_at.toISOString(), data: target.data }));
        const msgId = messageId(target.event_id, target.webhook_id);
        const timestamp = Math.floor(Date.now() / 1000);
        const response = await poolOf(url.origin).request({
          path: url.pathname + url.search,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'webhook-id': msgId,
            'webhook-timestamp': String(timestamp),
            // Stored sealed, as Funil keeps it: opened per attempt, as Funil does.
            'webhook-signature': signatureHeader([secrets().open(target.secret)], msgId, timestamp, body),
          },
          body,
        });
        await response.body.dump();
        sent.push({ target, status: response.statusCode, ms: Math.round(performance.now() - started) });
      }
      await db.sql.query(LOG, [
        sent.map((s) => s.target.tenant_id),
        sent.map((s) => s.target.webhook_id),
        sent.map((s) => s.target.event_id),
        sent.map((s) => s.target.type),
        sent.map((s) => s.status),
        sent.map((s) => s.ms),
      ]);
      await db.sql.query(DONE, [jobs.map((j) => j.id)]);
    }
  };

  const loops = [dispatcher(), ...Array.from({ length: DELIVERIES_PER_WEBHOOK }, deliverer)];
  return {
    async stop() {
      stopping = true;
      await Promise.all(loops);
      await Promise.all([...pools.values()].map((p) => p.close()));
    },
  };
}
