// Keys that start with tenant_id, read from the live catalog: every primary and unique key of a tenant
// table starts with tenant_id, every foreign key between tenant tables includes it, so Citus can
// distribute the schema by organisation. The create_distributed_table / create_reference_table list of
// docs/operations.md is checked against the same catalog, and the
// migration that brought the keys is run on a database that already holds data.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, MIGRATIONS_DIR, type SqlRunner } from '../../src/db/migrate.js';
import { TenantClients } from '../../src/db/tenant-scope.js';
import { DELIVER_QUEUE, dispatchQueue } from '../../src/domains/webhooks/jobs.js';
import type { JobInfo } from '../../src/jobs/queue.js';
import type { Config } from '../../src/config.js';
import { openTestDatabase, POSTGRES_URL, testDatabaseKind } from '../helpers/database.js';
import { allDocs } from '../helpers/docs.js';

/** The migration that made the keys tenant-first; the one before it is the database "already in use". */
const KEYS_MIGRATION = '20261125165000_tenant_first_keys';
/** The table every tenant table is co-located with: its key is the organisation's id. */
const TENANTS = 'tenants';
/** Prisma's bookkeeping: stays on the coordinator, where migrations run. */
const LOCAL_TABLES = new Set(['_prisma_migrations']);

interface Catalog {
  /** Table → its columns. */
  tables: Map<string, string[]>;
  /** Primary keys, unique constraints and unique (also partial) indexes, exclusion constraints. */
  keys: { table: string; name: string; columns: string[] }[];
  foreignKeys: { table: string; name: string; columns: string[]; references: string; referenced: string[] }[];
}

/** The columns of an index or constraint, in key order; an expression reads `(expression)`. */
const keyColumns = (keys: string, relation: string) => `
  ARRAY(SELECT COALESCE(a.attname::text, '(expression)') FROM unnest(${keys}) WITH ORDINALITY k(attnum, n)
        LEFT JOIN pg_attribute a ON a.attrelid = ${relation} AND a.attnum = k.attnum ORDER BY k.n)::text[]`;

async function readCatalog(sql: SqlRunner): Promise<Catalog> {
  const here = `(SELECT oid FROM pg_namespace WHERE nspname = current_schema())`;
  const tables = await sql.query<{ table: string; columns: string[] }>(`
    SELECT c.relname::text AS table, array_agg(a.attname::text ORDER BY a.attnum)::text[] AS columns
    FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    WHERE c.relkind IN ('r', 'p') AND c.relnamespace = ${here}
    GROUP BY c.relname`);
  const keys = await sql.query<Catalog['keys'][number]>(`
    SELECT t.relname::text AS table, i.relname::text AS name, ${keyColumns('x.indkey::int2[]', 't.oid')} AS columns
    FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
    WHERE (x.indisunique OR x.indisexclusion) AND t.relnamespace = ${here}
    UNION ALL
    SELECT t.relname::text, c.conname::text, ${keyColumns('c.conkey', 'c.conrelid')}
    FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
    WHERE c.contype IN ('p', 'u', 'x') AND c.conindid = 0 AND t.relnamespace = ${here}`);
  const foreignKeys = await sql.query<Catalog['foreignKeys'][number]>(`
    SELECT t.relname::text AS table, c.conname::text AS name, ${keyColumns('c.conkey', 'c.conrelid')} AS columns,
           f.relname::text AS references, ${keyColumns('c.confkey', 'c.confrelid')} AS referenced
    FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_class f ON f.oid = c.confrelid
    WHERE c.contype = 'f' AND t.relnamespace = ${here}`);
  return { tables: new Map(tables.map((t) => [t.table, t.columns])), keys, foreignKeys };
}

/** The column a table is distributed by: the organisation's id; none for a reference table. */
function distributionColumn(catalog: Catalog, table: string): string | undefined {
  if (table === TENANTS) return 'id';
  return catalog.tables.get(table)?.includes('tenant_id') ? 'tenant_id' : undefined;
}

/** Every key that breaks the rule, named, with why. */
function violations(catalog: Catalog): string[] {
  const found: string[] = [];
  for (const key of catalog.keys) {
    const column = distributionColumn(catalog, key.table);
    if (column && key.columns[0] !== column)
      found.push(`${key.table}: key ${key.name} (${key.columns.join(', ')}) does not start with ${column}`);
  }
  for (const fk of catalog.foreignKeys) {
    const from = distributionColumn(catalog, fk.table);
    const to = distributionColumn(catalog, fk.references);
    const pairs = fk.columns.map((c, i) => `${c}→${fk.referenced[i]}`);
    const describe = `${fk.table}: foreign key ${fk.name} (${fk.columns.join(', ')}) → ${fk.references} (${fk.referenced.join(', ')})`;
    if (from && to && !pairs.includes(`${from}→${to}`)) found.push(`${describe} does not include ${from}→${to}`);
    if (!from && to && !LOCAL_TABLES.has(fk.table)) found.push(`${describe}: a reference table cannot point into a distributed one`);
  }
  return found.sort();
}

/**
 * The Citus statements for this catalog: reference tables, then the distributed ones co-located with
 * `tenants`, each after the tables its foreign keys point to (Citus refuses a key to a table that is
 * not distributed yet).
 */
function citusStatements(catalog: Catalog): string[] {
  const tables = [...catalog.tables.keys()].filter((t) => !LOCAL_TABLES.has(t)).sort();
  const reference = tables.filter((t) => !distributionColumn(catalog, t));
  const pending = new Set(tables.filter((t) => distributionColumn(catalog, t)));
  const ordered: string[] = [];
  while (pending.size) {
    const next = [...pending].find((t) =>
      catalog.foreignKeys.every((fk) => fk.table !== t || fk.references === t || !pending.has(fk.references)),
    );
    if (!next) throw new Error(`Foreign keys in a cycle among ${[...pending].join(', ')}`);
    ordered.push(next);
    pending.delete(next);
  }
  return [
    ...reference.map((t) => `SELECT create_reference_table('${t}');`),
    ...ordered.map((t) =>
      t === TENANTS
        ? `SELECT create_distributed_table('${t}', 'id');`
        : `SELECT create_distributed_table('${t}', 'tenant_id', colocate_with => '${TENANTS}');`,
    ),
  ];
}

/** The ```sql block of the documentation (docs/operations.md) that calls create_distributed_table. */
function documentedCitusStatements(): string[] {
  const docs = allDocs();
  const block = [...docs.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]).find((b) => b.includes('create_distributed_table'));
  return (block ?? '').split('\n').filter((l) => l.startsWith('SELECT '));
}

describe('tenant-first keys', () => {
  let db: Awaited<ReturnType<typeof openTestDatabase>>;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db?.close();
  });

  it('every primary and unique key of a tenant table starts with tenant_id; every foreign key between them includes it', async () => {
    const catalog = await readCatalog(db.sql);
    // The check has something to check: the tables and keys the schema is known to have.
    expect(catalog.keys.find((k) => k.name === 'deals_pkey')?.columns).toEqual(['tenant_id', 'id']);
    expect(catalog.keys.find((k) => k.name === 'conversations_one_open_per_lead')?.columns).toEqual(['tenant_id', 'lead_id']);
    expect(catalog.foreignKeys.find((k) => k.name === 'deals_tenant_id_pipeline_id_stage_id_fkey')).toMatchObject({
      columns: ['tenant_id', 'pipeline_id', 'stage_id'],
      references: 'stages',
      referenced: ['tenant_id', 'pipeline_id', 'id'],
    });
    expect(violations(catalog)).toEqual([]);
  });

  it('names each key that breaks the rule', async () => {
    await db.sql.script(`
      CREATE TABLE probe_parent (tenant_id uuid NOT NULL REFERENCES tenants (id), id uuid PRIMARY KEY, code text UNIQUE);
      CREATE UNIQUE INDEX probe_parent_tenant_key ON probe_parent (tenant_id, id);
      CREATE TABLE probe_child (tenant_id uuid NOT NULL, parent_id uuid REFERENCES probe_parent (id), PRIMARY KEY (tenant_id, parent_id));
      CREATE TABLE probe_reference (id int PRIMARY KEY, deal_tenant uuid, deal_id uuid,
        FOREIGN KEY (deal_tenant, deal_id) REFERENCES deals (tenant_id, id));`);
    try {
      expect(violations(await readCatalog(db.sql))).toEqual([
        'probe_child: foreign key probe_child_parent_id_fkey (parent_id) → probe_parent (id) does not include tenant_id→tenant_id',
        'probe_parent: key probe_parent_code_key (code) does not start with tenant_id',
        'probe_parent: key probe_parent_pkey (id) does not start with tenant_id',
        'probe_reference: foreign key probe_reference_deal_tenant_deal_id_fkey (deal_tenant, deal_id) → deals (tenant_id, id): a reference table cannot point into a distributed one',
      ]);
    } finally {
      await db.sql.script('DROP TABLE probe_reference; DROP TABLE probe_child; DROP TABLE probe_parent;');
    }
  });

  it("the scoped client names a row by { id } alone: its own organisation's key, at the top and in cursors", async () => {
    const tenants = new TenantClients(db.prisma);
    const [a, b] = await Promise.all(['A', 'B'].map(async (name) => tenants.for((await db.prisma.tenant.create({ data: { name } })).id)));
    const tagsOf = (scoped: typeof a, prefix: string) =>
      Promise.all([1, 2, 3].map((n) => scoped.tag.create({ data: { name: `${prefix}${n}`, color: '#000000' } })));
    const [aTags, bTags] = [await tagsOf(a, 'a'), await tagsOf(b, 'b')];

    expect(await a.tag.findUnique({ where: { id: aTags[0].id } })).toMatchObject({ name: 'a1' });
    expect(await a.tag.findUnique({ where: { id: bTags[0].id } })).toBeNull();
    expect(await a.tag.update({ where: { id: aTags[1].id }, data: { color: '#ffffff' } })).toMatchObject({ name: 'a2', color: '#ffffff' });
    await expect(a.tag.update({ where: { id: bTags[1].id }, data: { color: '#ffffff' } })).rejects.toMatchObject({ code: 'P2025' });
    await expect(a.tag.delete({ where: { id: bTags[2].id } })).rejects.toMatchObject({ code: 'P2025' });
    expect(await b.tag.count()).toBe(3);

    // A page after a cursor, at the top and in an included relation (as Pothos plans connections).
    const byId = { orderBy: { id: 'asc' as const } };
    const sorted = [...aTags].sort((x, y) => x.id.localeCompare(y.id));
    expect((await a.tag.findMany({ ...byId, cursor: { id: sorted[0].id }, skip: 1 })).map((t) => t.id)).toEqual(
      sorted.slice(1).map((t) => t.id),
    );
    expect(await a.tag.findMany({ ...byId, cursor: { id: bTags[0].id }, skip: 1 })).toEqual([]);
    const lead = await a.lead.create({ data: { name: 'L', phone: '+5511988887777' } });
    await a.leadTag.createMany({ data: sorted.map((t) => ({ lead_id: lead.id, tag_id: t.id })) });
    const withTags = await a.lead.findUniqueOrThrow({
      where: { id: lead.id },
      include: {
        lead_tags: {
          orderBy: { tag_id: 'asc' },
          cursor: { tenant_id_lead_id_tag_id: { tenant_id: a.$tenantId, lead_id: lead.id, tag_id: sorted[1].id } },
        },
      },
    });
    expect(withTags.lead_tags.map((t) => t.tag_id)).toEqual(sorted.slice(1).map((t) => t.id));
    const group = await a.pipelineGroup.create({ data: { name: 'G', position: 0 } });
    const pipelines = await Promise.all(
      [0, 1, 2].map((position) => a.pipeline.create({ data: { group_id: group.id, name: `P${position}`, position, loss_reasons: [] } })),
    );
    const ordered = [...pipelines].sort((x, y) => x.id.localeCompare(y.id));
    const page = await a.pipelineGroup.findUniqueOrThrow({
      where: { id: group.id },
      include: { pipelines: { ...byId, cursor: { id: ordered[0].id }, skip: 1 } },
    });
    expect(page.pipelines.map((p) => p.id)).toEqual(ordered.slice(1).map((p) => p.id));
  });

  it('an event dispatch queued by the previous version (no organisation in it) still reaches the hooks', async () => {
    const scoped = new TenantClients(db.prisma).for((await db.prisma.tenant.create({ data: { name: 'Hooks' } })).id);
    const hook = await scoped.webhook.create({
      data: { url: 'https://example.com/hook', events: ['deal.created'], active_since: new Date(0), secret: 's' },
    });
    const event = await scoped.event.create({ data: { type: 'deal.created', data: {} } });
    const queue = dispatchQueue({ db, config: { webhookRetrySchedule: [0] } as Config });
    await queue.batch!.handler([{ payload: { event_id: event.id }, job: {} as JobInfo }], new AbortController().signal);
    const jobs = await db.prisma.job.findMany({ where: { queue: DELIVER_QUEUE.queue } });
    expect(jobs.map((j) => j.payload)).toEqual([{ tenant_id: scoped.$tenantId, webhook_id: hook.id, event_id: event.id }]);
  });

  it('the documented Citus list names every table, each after the tables it points to', async () => {
    const expected = citusStatements(await readCatalog(db.sql));
    expect(expected).toContain("SELECT create_reference_table('jobs');");
    expect(documentedCitusStatements()).toEqual(expected);
  });
});

/** A new, empty database of the kind under test, driven by the migrator's own interface. */
async function emptyDatabase(): Promise<{ sql: SqlRunner; close(): Promise<void> }> {
  if (testDatabaseKind() === 'pglite') {
    const { PGlite } = await import('@electric-sql/pglite');
    const { unaccent } = await import('@electric-sql/pglite/contrib/unaccent');
    const lite = new PGlite({ extensions: { unaccent } });
    return {
      sql: { script: async (s) => void (await lite.exec(s)), query: async (s, params) => (await lite.query(s, params)).rows as never[] },
      close: () => lite.close(),
    };
  }
  const schema = `funil_test_${Math.floor(Date.now() / 1000)}_keys${randomBytes(3).toString('hex')}`;
  const client = new pg.Client({ connectionString: POSTGRES_URL, options: `-c search_path=${schema}` });
  await client.connect();
  await client.query(`CREATE SCHEMA ${schema}`);
  return {
    sql: {
      script: async (s) => void (await client.query(s)),
      query: async (s, params) => (await client.query(s, params as unknown[])).rows,
    },
    async close() {
      await client.query(`DROP SCHEMA ${schema} CASCADE`);
      await client.end();
    },
  };
}

describe('the tenant-first keys migration on a database in use', () => {
  it(
    'keeps every row and its id, re-keys the tables, and gives queued event dispatches their organisation',
    { timeout: 120_000 },
    async () => {
      const older = fs.mkdtempSync(path.join(os.tmpdir(), 'funil-keys-migrations-'));
      for (const name of fs.readdirSync(MIGRATIONS_DIR)) {
        if (name < KEYS_MIGRATION) fs.cpSync(path.join(MIGRATIONS_DIR, name), path.join(older, name), { recursive: true });
      }
      const db = await emptyDatabase();
      try {
        await migrate(db.sql, older);
        const [a, b] = [randomUUID(), randomUUID()];
        const ids: Record<string, string> = Object.fromEntries(
          ['user', 'key', 'lead', 'tag', 'group', 'pipeline', 'stage', 'deal', 'event', 'upload', 'bLead'].map((n) => [n, randomUUID()]),
        );
        const id = (name: string) => `'${ids[name]}'`;
        await db.sql.script(`
        INSERT INTO tenants (id, name) VALUES ('${a}', 'A'), ('${b}', 'B');
        INSERT INTO users (id, tenant_id, name, email, role) VALUES (${id('user')}, '${a}', 'Ana', 'ana@example.com', 'owner');
        INSERT INTO api_keys (id, tenant_id, user_id, name, prefix, key_hash, permissions) VALUES (${id('key')}, '${a}', ${id('user')}, 'k', 'fnl_abc', 'hash-a', '{}');
        INSERT INTO leads (id, tenant_id, name, phone) VALUES (${id('lead')}, '${a}', 'Lead', '+5511999990000'), (${id('bLead')}, '${b}', 'Lead B', '+5511999990001');
        INSERT INTO tags (id, tenant_id, name, color) VALUES (${id('tag')}, '${a}', 'vip', '#000000');
        INSERT INTO lead_tags (tenant_id, lead_id, tag_id) VALUES ('${a}', ${id('lead')}, ${id('tag')});
        INSERT INTO pipeline_groups (id, tenant_id, name, position) VALUES (${id('group')}, '${a}', 'G', 0);
        INSERT INTO pipelines (id, tenant_id, group_id, name, position, loss_reasons) VALUES (${id('pipeline')}, '${a}', ${id('group')}, 'P', 0, '{}');
        INSERT INTO stages (id, tenant_id, pipeline_id, name, position) VALUES (${id('stage')}, '${a}', ${id('pipeline')}, 'S', 0);
        INSERT INTO deals (id, tenant_id, number, pipeline_id, stage_id, lead_id) VALUES (${id('deal')}, '${a}', 1, ${id('pipeline')}, ${id('stage')}, ${id('lead')});
        INSERT INTO deal_tags (tenant_id, deal_id, tag_id) VALUES ('${a}', ${id('deal')}, ${id('tag')});
        INSERT INTO events (id, tenant_id, type, data) VALUES (${id('event')}, '${a}', 'deal.created', '{}');
        INSERT INTO jobs (queue, payload) VALUES ('events.dispatch', jsonb_build_object('event_id', ${id('event')}));
        INSERT INTO uploads (id, tenant_id, storage_key, filename, file_type, mime_type, size) VALUES (${id('upload')}, '${a}', 'key-1', 'f', 'media', 'image/png', 1);`);
        const rows = () =>
          db.sql.query(`
          SELECT 'deals' AS t, tenant_id::text, id::text FROM deals UNION ALL SELECT 'leads', tenant_id::text, id::text FROM leads
          UNION ALL SELECT 'api_keys', tenant_id::text, id::text FROM api_keys UNION ALL SELECT 'uploads', tenant_id::text, id::text FROM uploads
          UNION ALL SELECT 'lead_tags', tenant_id::text, lead_id::text || '/' || tag_id::text FROM lead_tags
          UNION ALL SELECT 'deal_tags', tenant_id::text, deal_id::text || '/' || tag_id::text FROM deal_tags
          ORDER BY 1, 3`);
        const before = await rows();

        expect(await migrate(db.sql)).toContain(KEYS_MIGRATION);

        expect(await rows()).toEqual(before);
        expect(violations(await readCatalog(db.sql))).toEqual([]);
        const [job] = await db.sql.query<{ payload: unknown }>(`SELECT payload FROM jobs WHERE queue = 'events.dispatch'`);
        expect(job.payload).toEqual({ tenant_id: a, event_id: ids.event });
        // The composite keys still hold: a deal of A cannot point at B's lead.
        await expect(
          db.sql.script(
            `INSERT INTO deals (tenant_id, number, pipeline_id, stage_id, lead_id) VALUES ('${a}', 2, ${id('pipeline')}, ${id('stage')}, ${id('bLead')})`,
          ),
        ).rejects.toThrow(/foreign key/);
      } finally {
        await db.close();
        fs.rmSync(older, { recursive: true });
      }
    },
  );
});
