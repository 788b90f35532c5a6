-- Knowledge base: assistants, knowledge items (global, or exclusive to one assistant), the exclusions of
-- global items, and full-text search over name, description and content (decisions.md "Knowledge files
-- and search").

-- Accent-insensitive text search. unaccent is installed once per database in "public" (or used where it
-- already is), never in the migrated schema, so dropping a schema cannot drop it from under others. Each
-- knowledge_* configuration is a copy of a built-in one whose word mappings run unaccent first: vectors,
-- queries and ts_headline all see "orcamento" in "Orçamento", and headlines still show the original text.
DO $$
DECLARE
  ext_schema text;
BEGIN
  SELECT n.nspname INTO ext_schema
    FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
   WHERE e.extname = 'unaccent';
  IF ext_schema IS NULL THEN
    CREATE EXTENSION unaccent SCHEMA public;
    ext_schema := 'public';
  END IF;

  CREATE TEXT SEARCH CONFIGURATION knowledge_simple (COPY = pg_catalog.simple);
  EXECUTE format('ALTER TEXT SEARCH CONFIGURATION knowledge_simple ALTER MAPPING FOR word, hword, hword_part, numword, numhword, hword_numpart WITH %I.unaccent, pg_catalog.simple', ext_schema);

  CREATE TEXT SEARCH CONFIGURATION knowledge_portuguese (COPY = pg_catalog.portuguese);
  EXECUTE format('ALTER TEXT SEARCH CONFIGURATION knowledge_portuguese ALTER MAPPING FOR word, hword, hword_part WITH %I.unaccent, pg_catalog.portuguese_stem', ext_schema);
  EXECUTE format('ALTER TEXT SEARCH CONFIGURATION knowledge_portuguese ALTER MAPPING FOR numword, numhword, hword_numpart WITH %I.unaccent, pg_catalog.simple', ext_schema);

  CREATE TEXT SEARCH CONFIGURATION knowledge_english (COPY = pg_catalog.english);
  EXECUTE format('ALTER TEXT SEARCH CONFIGURATION knowledge_english ALTER MAPPING FOR word, hword, hword_part WITH %I.unaccent, pg_catalog.english_stem', ext_schema);
  EXECUTE format('ALTER TEXT SEARCH CONFIGURATION knowledge_english ALTER MAPPING FOR numword, numhword, hword_numpart WITH %I.unaccent, pg_catalog.simple', ext_schema);
END
$$;

-- CreateTable
CREATE TABLE "assistants" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "instructions" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "assistants_pkey" PRIMARY KEY ("id")
);

-- CreateTable
-- search_vector: name (weight A), description (B) and content (C) under the three configurations. Only the
-- first 250,000 characters of content are indexed: a tsvector holds at most 1 MB, which text of that length
-- stays under even when every word is distinct.
CREATE TABLE "knowledge_items" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "typed_text" TEXT NOT NULL DEFAULT '',
    "file_text" TEXT NOT NULL DEFAULT '',
    "source_url" TEXT,
    "usage_instruction" TEXT,
    "assistant_id" UUID,
    "file_name" TEXT,
    "file_type" TEXT,
    "file_size" INTEGER,
    "search_vector" tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('knowledge_simple', "name"), 'A')
        || setweight(to_tsvector('knowledge_portuguese', "name"), 'A')
        || setweight(to_tsvector('knowledge_english', "name"), 'A')
        || setweight(to_tsvector('knowledge_simple', "description"), 'B')
        || setweight(to_tsvector('knowledge_portuguese', "description"), 'B')
        || setweight(to_tsvector('knowledge_english', "description"), 'B')
        || setweight(to_tsvector('knowledge_simple', left("typed_text" || E'\n\n' || "file_text", 250000)), 'C')
        || setweight(to_tsvector('knowledge_portuguese', left("typed_text" || E'\n\n' || "file_text", 250000)), 'C')
        || setweight(to_tsvector('knowledge_english', left("typed_text" || E'\n\n' || "file_text", 250000)), 'C')
    ) STORED,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "knowledge_items_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "knowledge_exclusions" (
    "tenant_id" UUID NOT NULL,
    "item_id" UUID NOT NULL,
    "assistant_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "knowledge_exclusions_pkey" PRIMARY KEY ("item_id","assistant_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "assistants_tenant_id_id_key" ON "assistants"("tenant_id", "id");

-- CreateIndex
CREATE INDEX "assistants_tenant_id_created_at_idx" ON "assistants"("tenant_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "knowledge_items_tenant_id_id_key" ON "knowledge_items"("tenant_id", "id");

-- CreateIndex
CREATE INDEX "knowledge_items_tenant_id_created_at_id_idx" ON "knowledge_items"("tenant_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "knowledge_items_tenant_id_assistant_id_idx" ON "knowledge_items"("tenant_id", "assistant_id");

-- CreateIndex
CREATE INDEX "knowledge_items_search_vector_idx" ON "knowledge_items" USING GIN ("search_vector");

-- CreateIndex
CREATE INDEX "knowledge_exclusions_tenant_id_assistant_id_idx" ON "knowledge_exclusions"("tenant_id", "assistant_id");

-- AddForeignKey
ALTER TABLE "assistants" ADD CONSTRAINT "assistants_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "knowledge_items" ADD CONSTRAINT "knowledge_items_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "knowledge_items" ADD CONSTRAINT "knowledge_items_tenant_id_assistant_id_fkey" FOREIGN KEY ("tenant_id", "assistant_id") REFERENCES "assistants"("tenant_id", "id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "knowledge_exclusions" ADD CONSTRAINT "knowledge_exclusions_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "knowledge_exclusions" ADD CONSTRAINT "knowledge_exclusions_tenant_id_item_id_fkey" FOREIGN KEY ("tenant_id", "item_id") REFERENCES "knowledge_items"("tenant_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "knowledge_exclusions" ADD CONSTRAINT "knowledge_exclusions_tenant_id_assistant_id_fkey" FOREIGN KEY ("tenant_id", "assistant_id") REFERENCES "assistants"("tenant_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
