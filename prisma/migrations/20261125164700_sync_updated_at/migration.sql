-- Change sync (decisions.md "What integrations rely on"): lists page by (updated_at, id).
--
-- updated_at is written by the database, at the moment of the write (clock_timestamp()), whatever the
-- application sends: a sync page is cut at the start of the oldest open transaction (src/domains/common/sync.ts),
-- which is only sound when every row a transaction writes carries a time no earlier than that start, on
-- one clock. The application's clock (Prisma's @updatedAt) or the transaction's start (now()) would not do.
-- Templates had no updated_at: their last sync is their last change.
ALTER TABLE "templates" ADD COLUMN "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;
UPDATE "templates" SET "updated_at" = GREATEST("last_synced_at", "created_at");

CREATE FUNCTION "funil_touch_updated_at"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."updated_at" := clock_timestamp();
  RETURN NEW;
END
$$;

CREATE TRIGGER "leads_touch_updated_at" BEFORE INSERT OR UPDATE ON "leads" FOR EACH ROW EXECUTE FUNCTION "funil_touch_updated_at"();
CREATE TRIGGER "deals_touch_updated_at" BEFORE INSERT OR UPDATE ON "deals" FOR EACH ROW EXECUTE FUNCTION "funil_touch_updated_at"();
CREATE TRIGGER "conversations_touch_updated_at" BEFORE INSERT OR UPDATE ON "conversations" FOR EACH ROW EXECUTE FUNCTION "funil_touch_updated_at"();
CREATE TRIGGER "tags_touch_updated_at" BEFORE INSERT OR UPDATE ON "tags" FOR EACH ROW EXECUTE FUNCTION "funil_touch_updated_at"();
CREATE TRIGGER "products_touch_updated_at" BEFORE INSERT OR UPDATE ON "products" FOR EACH ROW EXECUTE FUNCTION "funil_touch_updated_at"();
CREATE TRIGGER "knowledge_items_touch_updated_at" BEFORE INSERT OR UPDATE ON "knowledge_items" FOR EACH ROW EXECUTE FUNCTION "funil_touch_updated_at"();
CREATE TRIGGER "templates_touch_updated_at" BEFORE INSERT OR UPDATE ON "templates" FOR EACH ROW EXECUTE FUNCTION "funil_touch_updated_at"();

-- A sync page is an index range scan, like a normal page (conversations already have
-- (tenant_id, updated_at DESC, id DESC), read backwards).
CREATE INDEX "leads_tenant_id_updated_at_id_idx" ON "leads"("tenant_id", "updated_at", "id");
CREATE INDEX "deals_tenant_id_pipeline_id_updated_at_id_idx" ON "deals"("tenant_id", "pipeline_id", "updated_at", "id");
CREATE INDEX "tags_tenant_id_updated_at_id_idx" ON "tags"("tenant_id", "updated_at", "id");
CREATE INDEX "products_tenant_id_updated_at_id_idx" ON "products"("tenant_id", "updated_at", "id");
CREATE INDEX "knowledge_items_tenant_id_updated_at_id_idx" ON "knowledge_items"("tenant_id", "updated_at", "id");
CREATE INDEX "templates_tenant_id_updated_at_id_idx" ON "templates"("tenant_id", "updated_at", "id");
