-- Time in stage: when each deal entered its current stage. Existing deals take it from their history
-- (the latest move, win or loss into that stage from another one), else their creation.

-- AlterTable
ALTER TABLE "deals" ADD COLUMN "stage_entered_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

UPDATE "deals" d SET "stage_entered_at" = COALESCE(
  (SELECT max(e."created_at") FROM "deal_events" e
    WHERE e."tenant_id" = d."tenant_id" AND e."deal_id" = d."id" AND e."to_stage_id" = d."stage_id"
      AND e."type" IN ('stage_changed', 'won', 'lost') AND e."from_stage_id" IS DISTINCT FROM e."to_stage_id"),
  d."created_at");
