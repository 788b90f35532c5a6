// The state of the job queues in one aggregate over the jobs table, read when Prometheus scrapes
// /metrics (the app hands it to src/observability/metrics.ts), never per request or per job.
import type { SqlRunner } from '../db/migrate.js';
import type { QueueStats } from '../observability/metrics.js';

const STATS = `
  SELECT queue,
    count(*) FILTER (WHERE failed_at IS NULL AND run_at <= now() AND (locked_until IS NULL OR locked_until <= now()))::int AS waiting,
    count(*) FILTER (WHERE failed_at IS NULL AND locked_until > now())::int AS running,
    count(*) FILTER (WHERE failed_at IS NULL AND run_at > now() AND (locked_until IS NULL OR locked_until <= now()))::int AS scheduled,
    count(*) FILTER (WHERE failed_at IS NOT NULL)::int AS failed,
    COALESCE(EXTRACT(EPOCH FROM now() - min(run_at) FILTER (
      WHERE failed_at IS NULL AND run_at <= now() AND (locked_until IS NULL OR locked_until <= now()))), 0)::float8 AS oldest
  FROM jobs
  GROUP BY queue`;

export async function queueStats(sql: Pick<SqlRunner, 'query'>): Promise<QueueStats[]> {
  const rows = await sql.query<{ queue: string; waiting: number; running: number; scheduled: number; failed: number; oldest: number }>(
    STATS,
  );
  return rows.map((r) => ({
    queue: r.queue,
    waiting: r.waiting,
    running: r.running,
    scheduled: r.scheduled,
    failed: r.failed,
    oldestWaitingSeconds: r.oldest,
  }));
}
