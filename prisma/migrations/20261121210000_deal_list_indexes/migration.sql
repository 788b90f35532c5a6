-- Deals list and board order by (created_at, id): the id tie-break joins the indexes so a page is an index range scan.
-- DropIndex
DROP INDEX "deals_tenant_id_pipeline_id_created_at_idx";

-- DropIndex
DROP INDEX "deals_tenant_id_pipeline_id_stage_id_created_at_idx";

-- CreateIndex
CREATE INDEX "deals_tenant_id_pipeline_id_created_at_id_idx" ON "deals"("tenant_id", "pipeline_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "deals_tenant_id_pipeline_id_stage_id_created_at_id_idx" ON "deals"("tenant_id", "pipeline_id", "stage_id", "created_at", "id");

