-- Fair claims that do not read the backlog (src/jobs/runner.ts). A job of a fair queue carries its group
-- (group_key, set when it is queued: a webhook delivery's webhook, an outbound message's organisation;
-- '' in the other queues). The queue's groups are found by a skip scan of jobs_due_idx and each group's
-- oldest due jobs read from it in order, so one organisation's 100,000 queued deliveries cost another's
-- claim a few index probes.
--
-- jobs_due_idx replaces (queue, failed_at, run_at) rather than joining it: the queue's statistics often
-- say it is empty (autovacuum analyses it drained), and with two indexes on queue the planner, believing
-- one row either way, took the other one and read every due job of the queue per group.
ALTER TABLE "jobs" ADD COLUMN "group_key" TEXT NOT NULL DEFAULT '';
UPDATE "jobs" SET "group_key" = COALESCE("payload"->>'webhook_id', '') WHERE "queue" = 'webhooks.deliver';
UPDATE "jobs" SET "group_key" = COALESCE("payload"->>'tenant_id', '') WHERE "queue" = 'messages.deliver';

DROP INDEX "jobs_queue_failed_at_run_at_idx";
CREATE INDEX "jobs_due_idx" ON "jobs" ("queue", "group_key", "run_at", "id") WHERE "failed_at" IS NULL;

-- What runs now (current leases), read from the leased rows alone: at most the workers' slots in all.
CREATE INDEX "jobs_leased_idx" ON "jobs" ("queue") WHERE "locked_until" IS NOT NULL;
-- Failed jobs, kept for inspection, by queue.
CREATE INDEX "jobs_failed_idx" ON "jobs" ("queue") WHERE "failed_at" IS NOT NULL;
