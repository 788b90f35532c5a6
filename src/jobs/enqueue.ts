// Queues a job in the caller's transaction: it exists, and runs, only if that transaction commits.
// The NOTIFY is delivered on commit too, and wakes idle runners at once (./runner.ts).
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import type { TenantTx } from '../db/tenant-scope.js';
import type { FairQueueName, JobPayload } from './queue.js';

export const JOBS_CHANNEL = 'funil_jobs';

/**
 * For the SELECT of a statement that writes jobs itself (INSERT … SELECT in a CTE): wakes the job
 * runners once its transaction commits, as enqueue does. pg_notify returns void, which Prisma cannot read.
 */
export const notifyJobsSql = (tenant: Prisma.Sql) => Prisma.sql`pg_notify(${JOBS_CHANNEL}, ${tenant}::text)::text AS notified`;

/** The client, a tenant-scoped client, or (usually) an interactive transaction of either. */
export type SqlClient = Pick<PrismaClient, '$queryRaw'> | Pick<TenantTx, '$tenantQuery'>;

/**
 * Runs a statement on either kind of client. The job table serves every organisation; on a scoped
 * client the statement binds the tenant as the notification's payload, as `$tenantQuery` requires.
 */
function query<T>(db: SqlClient, build: (tenant: Prisma.Sql) => Prisma.Sql): Promise<T> {
  return '$tenantQuery' in db ? db.$tenantQuery<T>((tenant) => build(Prisma.sql`${tenant}::text`)) : db.$queryRaw<T>(build(Prisma.sql`''`));
}

export interface EnqueueOptions {
  delayMs?: number;
}

/** A plain queue by its name, or a fair one by its `fairQueue` name: its jobs are grouped by its field. */
export type QueueName = string | FairQueueName;

export async function enqueue(db: SqlClient, queue: QueueName, payload: JobPayload = {}, options: EnqueueOptions = {}): Promise<string> {
  const [id] = await enqueueMany(db, queue, [payload], options);
  return id;
}

/** Several jobs of one queue in one INSERT (one change that needs many: an event fanned out to its hooks). */
export async function enqueueMany(
  db: SqlClient,
  queue: QueueName,
  payloads: JobPayload[],
  options: EnqueueOptions = {},
): Promise<string[]> {
  const delayMs = options.delayMs ?? 0;
  if (!Number.isFinite(delayMs) || delayMs < 0) throw new Error(`enqueue: delayMs must be a number >= 0, got ${delayMs}`);
  if (!payloads.length) return [];
  const [name, groupBy] = typeof queue === 'string' ? [queue, null] : [queue.queue, queue.groupBy];
  // pg_notify returns void, which Prisma cannot read: hence the cast. Identical notifications of one
  // transaction are delivered once.
  const jobs = await query<{ id: string }[]>(
    db,
    (tenant) => Prisma.sql`
    WITH job AS (
      INSERT INTO jobs (queue, payload, run_at, group_key)
      SELECT ${name}, p.payload, now() + ${delayMs}::float8 * interval '1 millisecond',
        ${groupBy ? Prisma.sql`COALESCE(p.payload->>${groupBy}::text, '')` : Prisma.sql`''`}
      FROM jsonb_array_elements(${JSON.stringify(payloads)}::jsonb) WITH ORDINALITY AS p(payload, n)
      ORDER BY p.n
      RETURNING id)
    SELECT id::text AS id, pg_notify(${JOBS_CHANNEL}, ${tenant})::text AS notified FROM job`,
  );
  return jobs.map((j) => j.id);
}
