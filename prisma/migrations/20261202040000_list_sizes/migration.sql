-- The sizes GraphQL cost estimates read (src/http/graphql-cost.ts): per organisation, the longest list
-- of each capped kind any parent holds (a deal's lines and tags, a lead's tags, a pipeline's stages, a
-- department's members). A list is priced at this size instead of its cap, so a
-- board of realistic deals is not priced as if every deal had 200 lines.
--
-- Kept by the database on every insert and on every move of a row to another parent, whatever writes
-- it. A size only grows: a shorter list after a delete leaves it as it was, so it stays an upper bound
-- (the objects of an answer never exceed its estimate) without a scan. The row is written only when a
-- list grows past it, so concurrent writers do not queue on it.
CREATE TABLE "list_sizes" (
    "tenant_id" UUID NOT NULL,
    "list" TEXT NOT NULL,
    "size" INTEGER NOT NULL,

    CONSTRAINT "list_sizes_pkey" PRIMARY KEY ("tenant_id", "list")
);

ALTER TABLE "list_sizes" ADD CONSTRAINT "list_sizes_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- TG_ARGV[0]: the parent column. The list is named "<table>.<parent column>".
CREATE FUNCTION "funil_list_sizes_grow"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format(
    'INSERT INTO list_sizes (tenant_id, list, size)
       SELECT grown.tenant_id, %L, grown.size
       FROM (
         SELECT p.tenant_id, max(c.n)::int AS size
         FROM (SELECT DISTINCT tenant_id, %I AS parent FROM changed_rows) p
         CROSS JOIN LATERAL (SELECT count(*) AS n FROM %I t WHERE t.tenant_id = p.tenant_id AND t.%I = p.parent) c
         GROUP BY p.tenant_id
       ) grown
       LEFT JOIN list_sizes known ON known.tenant_id = grown.tenant_id AND known.list = %L
       WHERE known.size IS NULL OR known.size < grown.size
     ON CONFLICT (tenant_id, list) DO UPDATE SET size = EXCLUDED.size WHERE list_sizes.size < EXCLUDED.size',
    TG_TABLE_NAME || '.' || TG_ARGV[0], TG_ARGV[0], TG_TABLE_NAME, TG_ARGV[0], TG_TABLE_NAME || '.' || TG_ARGV[0]);
  RETURN NULL;
END
$$;

CREATE TRIGGER "deal_products_list_size" AFTER INSERT ON "deal_products" REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "funil_list_sizes_grow"('deal_id');
CREATE TRIGGER "deal_products_list_size_moved" AFTER UPDATE ON "deal_products" REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "funil_list_sizes_grow"('deal_id');
CREATE TRIGGER "deal_tags_list_size" AFTER INSERT ON "deal_tags" REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "funil_list_sizes_grow"('deal_id');
CREATE TRIGGER "deal_tags_list_size_moved" AFTER UPDATE ON "deal_tags" REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "funil_list_sizes_grow"('deal_id');
CREATE TRIGGER "lead_tags_list_size" AFTER INSERT ON "lead_tags" REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "funil_list_sizes_grow"('lead_id');
CREATE TRIGGER "lead_tags_list_size_moved" AFTER UPDATE ON "lead_tags" REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "funil_list_sizes_grow"('lead_id');
CREATE TRIGGER "stages_list_size" AFTER INSERT ON "stages" REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "funil_list_sizes_grow"('pipeline_id');
CREATE TRIGGER "stages_list_size_moved" AFTER UPDATE ON "stages" REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "funil_list_sizes_grow"('pipeline_id');
CREATE TRIGGER "department_members_list_size" AFTER INSERT ON "department_members" REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "funil_list_sizes_grow"('department_id');
CREATE TRIGGER "department_members_list_size_moved" AFTER UPDATE ON "department_members" REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "funil_list_sizes_grow"('department_id');

-- The lists already held.
INSERT INTO "list_sizes" ("tenant_id", "list", "size")
SELECT tenant_id, list, max(n)::int FROM (
  SELECT tenant_id, 'deal_products.deal_id' AS list, count(*) AS n FROM deal_products GROUP BY tenant_id, deal_id
  UNION ALL SELECT tenant_id, 'deal_tags.deal_id', count(*) FROM deal_tags GROUP BY tenant_id, deal_id
  UNION ALL SELECT tenant_id, 'lead_tags.lead_id', count(*) FROM lead_tags GROUP BY tenant_id, lead_id
  UNION ALL SELECT tenant_id, 'stages.pipeline_id', count(*) FROM stages GROUP BY tenant_id, pipeline_id
  UNION ALL SELECT tenant_id, 'department_members.department_id', count(*) FROM department_members GROUP BY tenant_id, department_id
) lists
GROUP BY tenant_id, list;
