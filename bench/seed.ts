// Benchmark data: one organisation on the local PostgreSQL, in a dedicated schema recreated per run.
// A "list" pipeline with LIST_DEALS deals (lines, tags, todos) and a "board" pipeline with BOARD_DEALS
// deals, over realistic leads and a product catalog. Seeded with INSERT … SELECT generate_series, on
// PostgreSQL (a pg.Pool) or on an embedded PGlite (bench/pglite.ts).
import { generateApiKey, hashApiKey } from '../src/auth/keys.js';

export interface Seeded {
  tenantId: string;
  key: string;
  listPipelineId: string;
  boardPipelineId: string;
}

const FIRST = [
  'Ana',
  'Bruno',
  'Carla',
  'Diego',
  'Eduarda',
  'Felipe',
  'Gabriela',
  'Henrique',
  'Isabela',
  'João',
  'Karina',
  'Lucas',
  'Mariana',
  'Nicolas',
  'Olívia',
  'Pedro',
  'Rafaela',
  'Samuel',
  'Tatiana',
  'Vitor',
];
const LAST = [
  'Silva',
  'Santos',
  'Oliveira',
  'Souza',
  'Rodrigues',
  'Ferreira',
  'Alves',
  'Pereira',
  'Lima',
  'Gomes',
  'Costa',
  'Ribeiro',
  'Martins',
  'Carvalho',
  'Almeida',
];
const COMPANY = ['Tech', 'Comércio', 'Logística', 'Consultoria', 'Alimentos', 'Saúde', 'Educação', 'Engenharia', 'Varejo', 'Serviços'];

const arr = (xs: string[]) => `ARRAY[${xs.map((x) => `'${x}'`).join(',')}]`;

/** Where the seed runs: a pg.Pool, or anything that answers a parameterised query with its rows. */
export interface SeedTarget {
  query(sql: string, params?: unknown[]): Promise<{ rows: any[] }>;
}

export async function seed(
  pool: SeedTarget,
  opts: { leads: number; listDeals: number; boardDeals: number; log: (s: string) => void },
): Promise<Seeded> {
  const key = generateApiKey();
  const q = (sql: string, params: unknown[] = []) => pool.query(sql, params);
  const {
    rows: [tenant],
  } = await q(`INSERT INTO tenants (name) VALUES ('Bench') RETURNING id`);
  const t = tenant.id as string;
  const {
    rows: [user],
  } = await q(`INSERT INTO users (tenant_id, name, email, role) VALUES ($1, 'Owner', 'owner@bench.test', 'owner') RETURNING id`, [t]);
  await q(
    `INSERT INTO api_keys (tenant_id, user_id, name, prefix, key_hash, permissions, last_used_at) VALUES ($1, $2, 'bench', $3, $4, '{}', now() + interval '1 day')`,
    [t, user.id, key.slice(0, 10), hashApiKey(key)],
  );
  const {
    rows: [group],
  } = await q(`INSERT INTO pipeline_groups (tenant_id, name, position) VALUES ($1, 'Comercial', 0) RETURNING id`, [t]);
  const pipelines: string[] = [];
  for (const [i, name] of ['Vendas (lista)', 'Vendas (board)'].entries()) {
    const {
      rows: [p],
    } = await q(
      `INSERT INTO pipelines (tenant_id, group_id, name, position, loss_reasons) VALUES ($1, $2, $3, $4, ARRAY['Preço','Concorrência','Sem resposta','Sem orçamento','Timing']) RETURNING id`,
      [t, group.id, name, i],
    );
    await q(
      `INSERT INTO stages (tenant_id, pipeline_id, name, kind, position)
       SELECT $1, $2, s.name, s.kind::"StageKind", s.pos FROM (VALUES ('Entrada', NULL, 0), ('Qualificação', NULL, 1), ('Proposta', NULL, 2), ('Negociação', NULL, 3), ('Ganho', 'won', 4), ('Perdido', 'lost', 5)) AS s(name, kind, pos)`,
      [t, p.id],
    );
    pipelines.push(p.id);
  }
  opts.log(`seed: ${opts.leads} leads, 200 products, 20 tags`);
  await q(
    `INSERT INTO leads (tenant_id, name, surname, phone, email, company, created_at)
     SELECT $1, (${arr(FIRST)})[1 + i % 20], (${arr(LAST)})[1 + (i / 20) % 15], '+5511' || lpad(i::text, 9, '0'),
            'lead' || i || '@exemplo.com.br', (${arr(COMPANY)})[1 + i % 10] || ' ' || (${arr(LAST)})[1 + i % 15] || ' Ltda',
            now() - (i % 700) * interval '1 day'
     FROM generate_series(1, $2::int) AS i`,
    [t, opts.leads],
  );
  await q(
    `INSERT INTO products (tenant_id, name, price) SELECT $1, 'Produto ' || i, round((10 + random() * 4990)::numeric, 2) FROM generate_series(1, 200) AS i`,
    [t],
  );
  await q(`INSERT INTO tags (tenant_id, name, color) SELECT $1, 'tag-' || i, '#22c55e' FROM generate_series(1, 20) AS i`, [t]);

  // Deals: stage chosen by i, created_at spread over two years, won/lost dates on those stages; each
  // entered its stage when created (won and lost ones when closed), so the board's time in stage is real.
  const insertDeals = async (pipelineId: string, count: number, firstNumber: number) => {
    await q(
      `WITH st AS (SELECT array_agg(id ORDER BY position) AS ids FROM stages WHERE tenant_id = $1 AND pipeline_id = $2),
            ld AS (SELECT array_agg(id) AS ids FROM leads WHERE tenant_id = $1)
       INSERT INTO deals (tenant_id, number, pipeline_id, stage_id, lead_id, value, total, origin, loss_reason, won_at, lost_at, stage_entered_at, created_at, updated_at)
       SELECT $1, $3::int + i + 1, $2, st.ids[1 + i % 6], ld.ids[1 + (i * 7919) % array_length(ld.ids, 1)],
              v, v, 'manual',
              CASE WHEN i % 6 = 5 THEN 'Preço' END,
              CASE WHEN i % 6 = 4 THEN c + interval '10 days' END,
              CASE WHEN i % 6 = 5 THEN c + interval '10 days' END,
              CASE WHEN i % 6 IN (4, 5) THEN c + interval '10 days' ELSE c END,
              c, c
       FROM st, ld, generate_series(0, $4::int - 1) AS i,
            LATERAL (SELECT round((100 + (i * 37) % 20000)::numeric, 2) AS v, now() - (i::float8 / $4::int) * interval '730 days' - (i % 1000) * interval '1 ms' AS c) x`,
      [t, pipelineId, firstNumber, count],
    );
  };
  opts.log(`seed: ${opts.listDeals} deals in the list pipeline`);
  await insertDeals(pipelines[0], opts.listDeals, 0);
  // Fresh statistics before the statements below join by this organisation's id: when an earlier line
  // left another organisation's million deals in the schema, the planner otherwise takes this one's for
  // a handful of rows and nests loops over the whole table (the kanban line's seed ran past 10 minutes).
  await q('ANALYZE deals');
  opts.log(`seed: lines, tags and todos of the list pipeline`);
  // 0–3 catalog lines per deal; total = Σ price × qty where there are lines.
  await q(
    `INSERT INTO deal_products (tenant_id, deal_id, product_id, name, price, qty, custom, position)
     SELECT d.tenant_id, d.id, p.id, p.name, p.price, 1 + (d.number + k) % 3, false, k
     FROM deals d CROSS JOIN generate_series(0, 2) AS k
     JOIN products p ON p.tenant_id = d.tenant_id AND p.name = 'Produto ' || (1 + (d.number * 13 + k * 71) % 200)
     WHERE d.tenant_id = $1 AND d.pipeline_id = $2 AND k < d.number % 4`,
    [t, pipelines[0]],
  );
  await q('ANALYZE deal_products');
  await q(
    `UPDATE deals d SET total = s.total FROM (SELECT deal_id, sum(price * qty) AS total FROM deal_products WHERE tenant_id = $1 GROUP BY deal_id) s
     WHERE d.tenant_id = $1 AND d.id = s.deal_id`,
    [t],
  );
  await q(
    `INSERT INTO deal_tags (tenant_id, deal_id, tag_id)
     SELECT d.tenant_id, d.id, tg.id FROM deals d JOIN tags tg ON tg.tenant_id = d.tenant_id AND tg.name IN ('tag-' || (1 + d.number % 20), 'tag-' || (1 + d.number % 7))
     WHERE d.tenant_id = $1 AND d.pipeline_id = $2`,
    [t, pipelines[0]],
  );
  await q(
    `INSERT INTO activities (tenant_id, deal_id, title, due_at, done)
     SELECT d.tenant_id, d.id, 'Follow-up ' || k, now() + ((d.number % 11) - 5 + k) * interval '1 day', (d.number + k) % 3 = 0
     FROM deals d CROSS JOIN generate_series(1, 2) AS k WHERE d.tenant_id = $1 AND d.pipeline_id = $2 AND d.number % 2 = 0`,
    [t, pipelines[0]],
  );
  opts.log(`seed: ${opts.boardDeals} deals in the board pipeline`);
  const chunk = 250_000;
  for (let done = 0; done < opts.boardDeals; done += chunk) {
    await insertDeals(pipelines[1], Math.min(chunk, opts.boardDeals - done), opts.listDeals + done);
  }
  await q(`UPDATE tenants SET deal_number_seq = $2 WHERE id = $1`, [t, opts.listDeals + opts.boardDeals]);
  opts.log('seed: VACUUM ANALYZE');
  for (const table of ['leads', 'deals', 'deal_products', 'deal_tags', 'activities', 'stages', 'pipelines', 'tags', 'products'])
    await q(`VACUUM ANALYZE ${table}`);
  return { tenantId: t, key, listPipelineId: pipelines[0], boardPipelineId: pipelines[1] };
}
