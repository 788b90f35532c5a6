-- Keys that start with tenant_id (decisions.md "Running on more than one machine"): every tenant table's
-- primary key becomes (tenant_id, id), every unique key starts with tenant_id, and the foreign keys
-- between tenant tables already include it, so the schema can be distributed by tenant_id (Citus; the
-- README lists the create_distributed_table calls). Rows keep their ids.
--
-- Each table's unique (tenant_id, id) index becomes its primary key as it is (ADD ... USING INDEX): no
-- index is rebuilt, and the composite foreign keys that reference that index keep it.

ALTER TABLE "users" DROP CONSTRAINT "users_pkey";
ALTER TABLE "users" ADD CONSTRAINT "users_pkey" PRIMARY KEY USING INDEX "users_tenant_id_id_key";

ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_pkey";
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_pkey" PRIMARY KEY USING INDEX "api_keys_tenant_id_id_key";

ALTER TABLE "lead_statuses" DROP CONSTRAINT "lead_statuses_pkey";
ALTER TABLE "lead_statuses" ADD CONSTRAINT "lead_statuses_pkey" PRIMARY KEY USING INDEX "lead_statuses_tenant_id_id_key";

ALTER TABLE "tags" DROP CONSTRAINT "tags_pkey";
ALTER TABLE "tags" ADD CONSTRAINT "tags_pkey" PRIMARY KEY USING INDEX "tags_tenant_id_id_key";

ALTER TABLE "leads" DROP CONSTRAINT "leads_pkey";
ALTER TABLE "leads" ADD CONSTRAINT "leads_pkey" PRIMARY KEY USING INDEX "leads_tenant_id_id_key";

ALTER TABLE "pipeline_groups" DROP CONSTRAINT "pipeline_groups_pkey";
ALTER TABLE "pipeline_groups" ADD CONSTRAINT "pipeline_groups_pkey" PRIMARY KEY USING INDEX "pipeline_groups_tenant_id_id_key";

ALTER TABLE "pipelines" DROP CONSTRAINT "pipelines_pkey";
ALTER TABLE "pipelines" ADD CONSTRAINT "pipelines_pkey" PRIMARY KEY USING INDEX "pipelines_tenant_id_id_key";

ALTER TABLE "stages" DROP CONSTRAINT "stages_pkey";
ALTER TABLE "stages" ADD CONSTRAINT "stages_pkey" PRIMARY KEY USING INDEX "stages_tenant_id_id_key";

ALTER TABLE "products" DROP CONSTRAINT "products_pkey";
ALTER TABLE "products" ADD CONSTRAINT "products_pkey" PRIMARY KEY USING INDEX "products_tenant_id_id_key";

ALTER TABLE "deals" DROP CONSTRAINT "deals_pkey";
ALTER TABLE "deals" ADD CONSTRAINT "deals_pkey" PRIMARY KEY USING INDEX "deals_tenant_id_id_key";

ALTER TABLE "deal_products" DROP CONSTRAINT "deal_products_pkey";
ALTER TABLE "deal_products" ADD CONSTRAINT "deal_products_pkey" PRIMARY KEY USING INDEX "deal_products_tenant_id_id_key";

ALTER TABLE "activities" DROP CONSTRAINT "activities_pkey";
ALTER TABLE "activities" ADD CONSTRAINT "activities_pkey" PRIMARY KEY USING INDEX "activities_tenant_id_id_key";

ALTER TABLE "deal_events" DROP CONSTRAINT "deal_events_pkey";
ALTER TABLE "deal_events" ADD CONSTRAINT "deal_events_pkey" PRIMARY KEY USING INDEX "deal_events_tenant_id_id_key";

ALTER TABLE "assistants" DROP CONSTRAINT "assistants_pkey";
ALTER TABLE "assistants" ADD CONSTRAINT "assistants_pkey" PRIMARY KEY USING INDEX "assistants_tenant_id_id_key";

ALTER TABLE "knowledge_items" DROP CONSTRAINT "knowledge_items_pkey";
ALTER TABLE "knowledge_items" ADD CONSTRAINT "knowledge_items_pkey" PRIMARY KEY USING INDEX "knowledge_items_tenant_id_id_key";

ALTER TABLE "templates" DROP CONSTRAINT "templates_pkey";
ALTER TABLE "templates" ADD CONSTRAINT "templates_pkey" PRIMARY KEY USING INDEX "templates_tenant_id_id_key";

ALTER TABLE "cadences" DROP CONSTRAINT "cadences_pkey";
ALTER TABLE "cadences" ADD CONSTRAINT "cadences_pkey" PRIMARY KEY USING INDEX "cadences_tenant_id_id_key";

ALTER TABLE "cadence_associations" DROP CONSTRAINT "cadence_associations_pkey";
ALTER TABLE "cadence_associations" ADD CONSTRAINT "cadence_associations_pkey" PRIMARY KEY USING INDEX "cadence_associations_tenant_id_id_key";

ALTER TABLE "events" DROP CONSTRAINT "events_pkey";
ALTER TABLE "events" ADD CONSTRAINT "events_pkey" PRIMARY KEY USING INDEX "events_tenant_id_id_key";

ALTER TABLE "departments" DROP CONSTRAINT "departments_pkey";
ALTER TABLE "departments" ADD CONSTRAINT "departments_pkey" PRIMARY KEY USING INDEX "departments_tenant_id_id_key";

ALTER TABLE "department_members" DROP CONSTRAINT "department_members_pkey";
ALTER TABLE "department_members" ADD CONSTRAINT "department_members_pkey" PRIMARY KEY USING INDEX "department_members_tenant_id_id_key";

ALTER TABLE "channels" DROP CONSTRAINT "channels_pkey";
ALTER TABLE "channels" ADD CONSTRAINT "channels_pkey" PRIMARY KEY USING INDEX "channels_tenant_id_id_key";

ALTER TABLE "conversations" DROP CONSTRAINT "conversations_pkey";
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_pkey" PRIMARY KEY USING INDEX "conversations_tenant_id_id_key";

ALTER TABLE "messages" DROP CONSTRAINT "messages_pkey";
ALTER TABLE "messages" ADD CONSTRAINT "messages_pkey" PRIMARY KEY USING INDEX "messages_tenant_id_id_key";

ALTER TABLE "webhooks" DROP CONSTRAINT "webhooks_pkey";
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_pkey" PRIMARY KEY USING INDEX "webhooks_tenant_id_id_key";

ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_pkey";
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY USING INDEX "webhook_deliveries_tenant_id_id_key";

ALTER TABLE "uploads" DROP CONSTRAINT "uploads_pkey";
ALTER TABLE "uploads" ADD CONSTRAINT "uploads_pkey" PRIMARY KEY USING INDEX "uploads_tenant_id_id_key";

-- Link tables: the organisation leads their keys too.
ALTER TABLE "lead_tags" DROP CONSTRAINT "lead_tags_pkey", ADD CONSTRAINT "lead_tags_pkey" PRIMARY KEY ("tenant_id", "lead_id", "tag_id");
ALTER TABLE "deal_tags" DROP CONSTRAINT "deal_tags_pkey", ADD CONSTRAINT "deal_tags_pkey" PRIMARY KEY ("tenant_id", "deal_id", "tag_id");
ALTER TABLE "knowledge_exclusions" DROP CONSTRAINT "knowledge_exclusions_pkey", ADD CONSTRAINT "knowledge_exclusions_pkey" PRIMARY KEY ("tenant_id", "item_id", "assistant_id");

-- Keys found without knowing the organisation (an API key's hash on every request, a file's storage key
-- in the media proxy and the sweep): unique within the organisation, and found through a plain index.
-- Both are random (about 190 bits), so two organisations never share one.
DROP INDEX "api_keys_key_hash_key";
CREATE UNIQUE INDEX "api_keys_tenant_id_key_hash_key" ON "api_keys"("tenant_id", "key_hash");
CREATE INDEX "api_keys_key_hash_idx" ON "api_keys"("key_hash");

DROP INDEX "uploads_storage_key_key";
CREATE UNIQUE INDEX "uploads_tenant_id_storage_key_key" ON "uploads"("tenant_id", "storage_key");
CREATE INDEX "uploads_storage_key_idx" ON "uploads"("storage_key");

DROP INDEX "messages_media_key_key";
CREATE UNIQUE INDEX "messages_tenant_id_media_key_key" ON "messages"("tenant_id", "media_key");
CREATE INDEX "messages_media_key_idx" ON "messages"("media_key");

-- The organisation now rides in each event's dispatch job (the handler reads the event by its key):
-- the jobs already queued get it too.
UPDATE "jobs" j SET "payload" = j."payload" || jsonb_build_object('tenant_id', e."tenant_id")
FROM "events" e
WHERE j."queue" = 'events.dispatch' AND NOT j."payload" ? 'tenant_id' AND e."id"::text = j."payload"->>'event_id';

-- The WhatsApp webhook's URL names a channel alone.
CREATE INDEX "channels_id_idx" ON "channels"("id");
