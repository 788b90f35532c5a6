-- Who answers a conversation: its assignee, when it was first answered and since when it waits; users'
-- availability and capacity; departments' routing.
CREATE TYPE "UserAvailability" AS ENUM ('online', 'away', 'offline');
CREATE TYPE "DepartmentRouting" AS ENUM ('manual', 'round_robin', 'balanced');

ALTER TABLE "users" ADD COLUMN "availability" "UserAvailability" NOT NULL DEFAULT 'offline',
  ADD COLUMN "capacity" INTEGER,
  ADD COLUMN "last_assigned_at" TIMESTAMPTZ(3);

ALTER TABLE "departments" ADD COLUMN "routing" "DepartmentRouting" NOT NULL DEFAULT 'manual',
  ADD COLUMN "last_assignee_id" UUID;

ALTER TABLE "conversations" ADD COLUMN "assignee_id" UUID,
  ADD COLUMN "first_response_at" TIMESTAMPTZ(3),
  ADD COLUMN "waiting_since" TIMESTAMPTZ(3);

ALTER TABLE "conversations" ADD CONSTRAINT "conversations_tenant_id_assignee_id_fkey" FOREIGN KEY ("tenant_id", "assignee_id") REFERENCES "users"("tenant_id", "id") ON DELETE NO ACTION ON UPDATE CASCADE;
CREATE INDEX "conversations_tenant_id_assignee_id_status_idx" ON "conversations"("tenant_id", "assignee_id", "status");
-- Routing's queue: a department's unassigned open conversations with a waiting message, oldest first.
CREATE INDEX "conversations_routing_queue" ON "conversations"("tenant_id", "department_id", "waiting_since") WHERE "status" = 'active' AND "assignee_id" IS NULL AND "waiting_since" IS NOT NULL;

-- Conversations already there: waiting since their oldest customer message after the last one sent.
UPDATE "conversations" c SET "waiting_since" = w.at
FROM (
  SELECT m.tenant_id, m.conversation_id, min(m.created_at) AS at FROM "messages" m
  WHERE m.role = 'user' AND NOT EXISTS (
    SELECT 1 FROM "messages" a WHERE a.tenant_id = m.tenant_id AND a.conversation_id = m.conversation_id AND a.role = 'assistant' AND a.created_at >= m.created_at)
  GROUP BY m.tenant_id, m.conversation_id) w
WHERE w.tenant_id = c.tenant_id AND w.conversation_id = c.id;
