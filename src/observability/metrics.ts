// Prometheus metrics (prom-client), served by GET /metrics when METRICS_TOKEN is set (./metrics-route.ts).
// A lower layer: the HTTP layer, the job runner and the domains call the small functions below; nothing
// here imports them (the app hands in what a scrape reads from the database). Until `enableMetrics()` (the app calls it when METRICS_TOKEN is set) every
// function returns at once, so a server without metrics pays nothing for them.
//
// Every label has a bounded set of values: routes are the route table's templates (`other` for a path
// no route matches), GraphQL operation names are capped, queues and outcomes are fixed in the code.
import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';

const MAX_OPERATION_NAMES = 100;

function createMetrics(client: typeof PromClient) {
  const registry = new client.Registry();
  const httpDuration = new client.Histogram({
    name: 'funil_http_request_duration_seconds',
    help: 'HTTP requests answered, by route template, method and status, and how long they took.',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });

  const graphqlOperations = new client.Counter({
    name: 'funil_graphql_operations_total',
    help: `GraphQL operations executed on /graphql, by type and operation name (the first ${MAX_OPERATION_NAMES} names seen; later ones count as "other", unnamed ones as "anonymous").`,
    labelNames: ['type', 'operation'] as const,
    registers: [registry],
  });

  const poolSize = new client.Gauge({
    name: 'funil_db_pool_size',
    help: 'Database connections this process may open (1 for the embedded database).',
    registers: [registry],
  });
  const poolInUse = new client.Gauge({
    name: 'funil_db_pool_in_use',
    help: 'Database connections running a statement or holding a transaction (embedded: a call under way).',
    registers: [registry],
  });
  const poolWaiting = new client.Gauge({
    name: 'funil_db_pool_waiting',
    help: 'Requests for a database connection waiting for one (embedded: calls queued).',
    registers: [registry],
  });

  const jobQueue = new client.Gauge({
    name: 'funil_job_queue_jobs',
    help: 'Jobs in the queue by state: waiting (due), running, scheduled (run_at in the future), failed (kept).',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
  });
  const jobOldest = new client.Gauge({
    name: 'funil_job_queue_oldest_waiting_seconds',
    help: 'How long the oldest due job of the queue has waited to be claimed (0 when none waits).',
    labelNames: ['queue'] as const,
    registers: [registry],
  });
  const jobRuns = new client.Histogram({
    name: 'funil_job_duration_seconds',
    help: "Job attempts run by this process, by queue and outcome (done, retry, failed), and their handler's duration.",
    labelNames: ['queue', 'outcome'] as const,
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60],
    registers: [registry],
  });

  const webhookAttempts = new client.Counter({
    name: 'funil_webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts made by this process, by outcome (succeeded, retrying, failed).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });

  const extractionsRunning = new client.Gauge({
    name: 'funil_extractions_running',
    help: 'Knowledge file extractions running in this process.',
    registers: [registry],
  });
  const extractionsWaiting = new client.Gauge({
    name: 'funil_extractions_waiting',
    help: 'Knowledge file extractions waiting for a slot in this process.',
    registers: [registry],
  });

  const rateLimitRefusals = new client.Counter({
    name: 'funil_rate_limit_refusals_total',
    help: 'Requests refused with 429, by limit (api_key: requests per key; organisation: requests per organisation; failed_auth: failed authentications per address).',
    labelNames: ['limit'] as const,
    registers: [registry],
  });

  const jsonPathFallbacks = new client.Counter({
    name: 'funil_json_path_fallbacks_total',
    help: 'Requests of a field PostgreSQL writes as JSON text that the resolvers answered instead, by root field and reason (selection: it asks for what the JSON path does not serve; error: the JSON path failed).',
    labelNames: ['field', 'reason'] as const,
    registers: [registry],
  });
  client.collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpDuration,
    graphqlOperations,
    poolSize,
    poolInUse,
    poolWaiting,
    jobQueue,
    jobOldest,
    jobRuns,
    webhookAttempts,
    extractionsRunning,
    extractionsWaiting,
    rateLimitRefusals,
    jsonPathFallbacks,
  };
}

type Metrics = ReturnType<typeof createMetrics>;
let created: Metrics | undefined;
/** The metrics being recorded; undefined while off. */
let m: Metrics | undefined;

/**
 * Starts recording (process-wide), with Node's own process_* and nodejs_* metrics. prom-client is loaded
 * here, not before: it loads @opentelemetry/api (for exemplars), which a server without metrics and
 * without tracing does not load at all. `false` pauses the recording (the bench compares on and off).
 */
export function enableMetrics(on = true): void {
  created ??= createMetrics(createRequire(import.meta.url)('prom-client') as typeof PromClient);
  m = on ? created : undefined;
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** One answered request; `route` is its template (undefined: no route matched). */
export function observeRequest(route: string | undefined, method: string, status: number, seconds: number): void {
  if (!m) return;
  m.httpDuration.observe({ route: route ?? 'other', method: METHODS.has(method) ? method : 'other', status: String(status) }, seconds);
}

const operationNames = new Set<string>();

export function countGraphQLOperation(type: string, name: string | undefined): void {
  if (!m) return;
  let operation = name ?? 'anonymous';
  if (!operationNames.has(operation)) {
    if (operationNames.size < MAX_OPERATION_NAMES) operationNames.add(operation);
    else operation = 'other';
  }
  m.graphqlOperations.inc({ type, operation });
}

export function observeJob(queue: string, outcome: 'done' | 'retry' | 'failed', seconds: number): void {
  if (m) m.jobRuns.observe({ queue, outcome }, seconds);
}

export function countWebhookAttempt(outcome: 'succeeded' | 'retrying' | 'failed'): void {
  if (m) m.webhookAttempts.inc({ outcome });
}

export function setExtractionQueue(running: number, waiting: number): void {
  if (!m) return;
  m.extractionsRunning.set(running);
  m.extractionsWaiting.set(waiting);
}

export function countRateLimitRefusal(limit: 'api_key' | 'organisation' | 'failed_auth'): void {
  if (m) m.rateLimitRefusals.inc({ limit });
}

/** `field` is a root field with a JSON path (a fixed, small set). */
export function countJsonPathFallback(field: string, reason: 'selection' | 'error'): void {
  if (m) m.jsonPathFallbacks.inc({ field, reason });
}

export interface PoolStats {
  size: number;
  inUse: number;
  waiting: number;
}

/** One queue's jobs by state, as the jobs table holds them at a scrape. */
export interface QueueStats {
  queue: string;
  /** Due and not held by a runner. */
  waiting: number;
  /** Held by a runner (lease not expired). */
  running: number;
  /** Waiting for their run_at (new delayed jobs, retries). */
  scheduled: number;
  /** Out of attempts, kept with their last error. */
  failed: number;
  /** Seconds since the oldest waiting job became due; 0 when none waits. */
  oldestWaitingSeconds: number;
}

/**
 * What a scrape reads from the database, handed in by the app (which owns the database and the jobs
 * table's query, jobs/stats.ts), so that nothing here imports the layers it measures.
 */
export interface ScrapedDatabase {
  pool?: () => PoolStats;
  queues: () => Promise<QueueStats[]>;
}

let database: ScrapedDatabase | undefined;
/** Queues seen so far: one that empties is reported at 0 rather than vanishing. */
const queuesSeen = new Set<string>();

export function observeDatabase(db: ScrapedDatabase): void {
  database = db;
}

async function readDatabase(m: Metrics, db: ScrapedDatabase) {
  const pool = db.pool?.();
  if (pool) {
    m.poolSize.set(pool.size);
    m.poolInUse.set(pool.inUse);
    m.poolWaiting.set(pool.waiting);
  }
  const stats = await db.queues();
  for (const s of stats) queuesSeen.add(s.queue);
  for (const queue of queuesSeen) {
    const s = stats.find((x) => x.queue === queue);
    for (const state of ['waiting', 'running', 'scheduled', 'failed'] as const) m.jobQueue.set({ queue, state }, s?.[state] ?? 0);
    m.jobOldest.set({ queue }, s?.oldestWaitingSeconds ?? 0);
  }
}

/** The text of a scrape. */
export async function metricsText(): Promise<{ contentType: string; body: string }> {
  if (!m) throw new Error('metrics are not enabled');
  if (database) await readDatabase(m, database);
  return { contentType: m.registry.contentType, body: await m.registry.metrics() };
}
