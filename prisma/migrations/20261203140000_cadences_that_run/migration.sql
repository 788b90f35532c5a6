-- Cadences that run: a cadence's steps, reply rule, send window and pause; enrolments of leads; and
-- one row per step message sent, whose key makes each one sent once.
ALTER TABLE "cadences" ADD COLUMN "steps" JSONB NOT NULL DEFAULT '[]',
  ADD COLUMN "stop_on_reply" BOOLEAN NOT NULL DEFAULT true,
  ADD COLUMN "send_window" JSONB,
  ADD COLUMN "active" BOOLEAN NOT NULL DEFAULT true,
  ADD COLUMN "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

CREATE TYPE "EnrolmentStatus" AS ENUM ('active', 'completed', 'stopped', 'failed');

CREATE TABLE "cadence_enrolments" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "cadence_id" UUID NOT NULL,
    "lead_id" UUID NOT NULL,
    "channel_id" UUID,
    "status" "EnrolmentStatus" NOT NULL DEFAULT 'active',
    "current_step" INTEGER NOT NULL DEFAULT 0,
    "next_send_at" TIMESTAMPTZ(3),
    "stop_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "cadence_enrolments_pkey" PRIMARY KEY ("tenant_id","id")
);

CREATE INDEX "cadence_enrolments_tenant_id_cadence_id_status_created_at_i_idx" ON "cadence_enrolments"("tenant_id", "cadence_id", "status", "created_at", "id");
CREATE INDEX "cadence_enrolments_tenant_id_lead_id_status_idx" ON "cadence_enrolments"("tenant_id", "lead_id", "status");
-- A lead is in a cadence at most once while active (enrolment's ON CONFLICT answers already_enrolled).
CREATE UNIQUE INDEX "cadence_enrolments_one_active" ON "cadence_enrolments"("tenant_id", "cadence_id", "lead_id") WHERE "status" = 'active';

ALTER TABLE "cadence_enrolments" ADD CONSTRAINT "cadence_enrolments_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "cadence_enrolments" ADD CONSTRAINT "cadence_enrolments_tenant_id_cadence_id_fkey" FOREIGN KEY ("tenant_id", "cadence_id") REFERENCES "cadences"("tenant_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "cadence_enrolments" ADD CONSTRAINT "cadence_enrolments_tenant_id_lead_id_fkey" FOREIGN KEY ("tenant_id", "lead_id") REFERENCES "leads"("tenant_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "cadence_sends" (
    "tenant_id" UUID NOT NULL,
    "enrolment_id" UUID NOT NULL,
    "step" INTEGER NOT NULL,
    "message_index" INTEGER NOT NULL,
    "message_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "cadence_sends_pkey" PRIMARY KEY ("tenant_id","enrolment_id","step","message_index")
);

CREATE INDEX "cadence_sends_tenant_id_message_id_idx" ON "cadence_sends"("tenant_id", "message_id");

ALTER TABLE "cadence_sends" ADD CONSTRAINT "cadence_sends_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "cadence_sends" ADD CONSTRAINT "cadence_sends_tenant_id_enrolment_id_fkey" FOREIGN KEY ("tenant_id", "enrolment_id") REFERENCES "cadence_enrolments"("tenant_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- updated_at written by the database at the write, as on the other synchronised tables.
CREATE TRIGGER "cadences_touch_updated_at" BEFORE INSERT OR UPDATE ON "cadences" FOR EACH ROW EXECUTE FUNCTION "funil_touch_updated_at"();
CREATE TRIGGER "cadence_enrolments_touch_updated_at" BEFORE INSERT OR UPDATE ON "cadence_enrolments" FOR EACH ROW EXECUTE FUNCTION "funil_touch_updated_at"();
