-- Templates synchronised from the provider, cadences, and cadence-step associations.

-- CreateEnum
CREATE TYPE "TemplateStatus" AS ENUM ('APPROVED', 'PENDING', 'REJECTED');

-- CreateEnum
CREATE TYPE "TemplateCategory" AS ENUM ('MARKETING', 'UTILITY', 'AUTHENTICATION');

-- CreateTable
CREATE TABLE "templates" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "provider_app_id" TEXT NOT NULL,
    "template_name" TEXT NOT NULL,
    "template_id" TEXT NOT NULL,
    "language" TEXT NOT NULL,
    "status" "TemplateStatus" NOT NULL,
    "category" "TemplateCategory" NOT NULL,
    "components" JSONB NOT NULL DEFAULT '[]',
    "last_synced_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "templates_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "cadences" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "cadences_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "cadence_associations" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "cadence_id" UUID NOT NULL,
    "step_index" INTEGER NOT NULL,
    "message_index" INTEGER NOT NULL,
    "template_id" UUID NOT NULL,
    "parameter_mapping" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "cadence_associations_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "templates_tenant_id_id_key" ON "templates"("tenant_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "templates_tenant_id_provider_app_id_template_name_language_key" ON "templates"("tenant_id", "provider_app_id", "template_name", "language");

-- CreateIndex
CREATE INDEX "templates_tenant_id_status_idx" ON "templates"("tenant_id", "status");

-- CreateIndex
CREATE INDEX "templates_tenant_id_category_idx" ON "templates"("tenant_id", "category");

-- CreateIndex
CREATE INDEX "templates_tenant_id_language_idx" ON "templates"("tenant_id", "language");

-- CreateIndex
CREATE INDEX "templates_tenant_id_template_name_language_idx" ON "templates"("tenant_id", "template_name", "language");

-- CreateIndex
CREATE UNIQUE INDEX "cadences_tenant_id_id_key" ON "cadences"("tenant_id", "id");

-- CreateIndex
CREATE INDEX "cadences_tenant_id_created_at_idx" ON "cadences"("tenant_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "cadence_associations_tenant_id_id_key" ON "cadence_associations"("tenant_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "cadence_associations_slot_key" ON "cadence_associations"("tenant_id", "cadence_id", "step_index", "message_index");

-- CreateIndex
CREATE INDEX "cadence_associations_tenant_id_template_id_idx" ON "cadence_associations"("tenant_id", "template_id");

-- AddForeignKey
ALTER TABLE "templates" ADD CONSTRAINT "templates_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "cadences" ADD CONSTRAINT "cadences_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "cadence_associations" ADD CONSTRAINT "cadence_associations_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "cadence_associations" ADD CONSTRAINT "cadence_associations_tenant_id_cadence_id_fkey" FOREIGN KEY ("tenant_id", "cadence_id") REFERENCES "cadences"("tenant_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "cadence_associations" ADD CONSTRAINT "cadence_associations_tenant_id_template_id_fkey" FOREIGN KEY ("tenant_id", "template_id") REFERENCES "templates"("tenant_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
