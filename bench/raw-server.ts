// The baseline: a hand-written HTTP handler answering the same routes with the same JSON, using `pg` and
// SQL directly (PostgreSQL builds the JSON). It authenticates the key like the app does. Routes: the deals
// list and board (bench/deals.ts), the kanban (bench/kanban.ts) and the knowledge search (bench/knowledge.ts).
import http from 'node:http';
import pg from 'pg';
import { hashApiKey } from '../src/auth/keys.js';

export interface RawServer {
  url: string;
  statements: { count: number };
  close(): Promise<void>;
}

/** A timestamp column as the API writes it (ISO 8601, milliseconds, UTC). */
export const ts = (c: string) => `to_char(${c} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

export const UNAUTHORIZED = '{"success":false,"error":{"code":"UNAUTHORIZED","message":"Chave de API inválida"}}';

/** The organisation of a live API key in an `Authorization: Bearer` header, by the same lookup as the app (one statement), or null. */
export async function tenantOfKey(
  query: (sql: string, params: unknown[]) => Promise<pg.QueryResult>,
  authorization: string | undefined,
): Promise<string | null> {
  const token = /^Bearer\s+(\S+)$/.exec(authorization ?? '')?.[1];
  if (!token) return null;
  const { rows } = await query(
    `SELECT k.tenant_id FROM api_keys k JOIN users u ON u.tenant_id = k.tenant_id AND u.id = k.user_id
     WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())`,
    [hashApiKey(token)],
  );
  return rows.length ? (rows[0].tenant_id as string) : null;
}

const DEAL_JSON = `json_build_object(
  'id', d.id, 'number', d.number, 'pipeline_id', d.pipeline_id, 'stage_id', d.stage_id, 'lead_id', d.lead_id, 'owner_id', d.owner_id,
  'value', d.value::float8, 'total', d.total::float8, 'origin', d.origin, 'loss_reason', d.loss_reason, 'note', d.note,
  'won_at', ${ts('d.won_at')}, 'lost_at', ${ts('d.lost_at')}, 'stage_entered_at', ${ts('d.stage_entered_at')}, 'created_at', ${ts('d.created_at')}, 'updated_at', ${ts('d.updated_at')},
  'lead_name', l.name, 'lead_surname', l.surname, 'lead_company', l.company, 'lead_email', l.email, 'lead_phone', l.phone,
  'lead_avatar', l.avatar_url, 'lead_status_id', l.status_id,
  'products', COALESCE((SELECT json_agg(json_build_object('id', p.id, 'product_id', p.product_id, 'name', p.name, 'price', p.price::float8,
      'qty', p.qty, 'custom', p.custom, 'total', (p.price * p.qty)::float8) ORDER BY p.position, p.created_at, p.id)
    FROM deal_products p WHERE p.tenant_id = d.tenant_id AND p.deal_id = d.id), '[]'),
  'tags', COALESCE((SELECT json_agg(json_build_object('id', t.id, 'name', t.name, 'color', t.color, 'created_at', ${ts('t.created_at')},
      'updated_at', ${ts('t.updated_at')}) ORDER BY t.name, t.id)
    FROM deal_tags dt JOIN tags t ON t.tenant_id = dt.tenant_id AND t.id = dt.tag_id WHERE dt.tenant_id = d.tenant_id AND dt.deal_id = d.id), '[]'),
  'pending_todos', (SELECT count(*) FROM activities a WHERE a.tenant_id = d.tenant_id AND a.deal_id = d.id AND NOT a.done),
  'overdue_todos', (SELECT count(*) FROM activities a WHERE a.tenant_id = d.tenant_id AND a.deal_id = d.id AND NOT a.done AND a.due_at < now()))`;

const LIST_SQL = `
  WITH page AS (SELECT * FROM deals WHERE tenant_id = $1 AND pipeline_id = $2 ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4)
  SELECT (SELECT count(*) FROM deals WHERE tenant_id = $1 AND pipeline_id = $2)::int AS total_count,
         COALESCE((SELECT json_agg(${DEAL_JSON} ORDER BY d.created_at DESC, d.id DESC)
                   FROM page d JOIN leads l ON l.tenant_id = d.tenant_id AND l.id = d.lead_id), '[]')::text AS data`;

const PIPELINE_SQL = `
  SELECT json_build_object('id', p.id, 'group_id', p.group_id, 'name', p.name, 'description', p.description, 'position', p.position,
    'stages', (SELECT json_agg(json_build_object('id', s.id, 'pipeline_id', s.pipeline_id, 'name', s.name, 'color', s.color, 'kind', s.kind,
        'position', s.position) ORDER BY s.position, s.created_at, s.id) FROM stages s WHERE s.tenant_id = p.tenant_id AND s.pipeline_id = p.id),
    'loss_reasons', to_json(p.loss_reasons), 'created_at', ${ts('p.created_at')})::text AS pipeline
  FROM pipelines p WHERE p.tenant_id = $1 AND p.id = $2`;

const BOARD_SQL = `
  SELECT json_build_object('id', s.id, 'pipeline_id', s.pipeline_id, 'name', s.name, 'color', s.color, 'kind', s.kind, 'position', s.position)::text AS stage,
         COALESCE(a.deal_count, 0)::int AS deal_count, COALESCE(a.total, 0)::float8 AS total, COALESCE(a.total, 0)::text AS exact,
         a.avg_days_in_stage
  FROM stages s
  LEFT JOIN (
    SELECT stage_id, count(*) AS deal_count, sum(total) AS total,
           -- Days the open deals have spent in their stage, averaged (as src/domains/deals/board.ts does).
           round((avg(extract(epoch FROM now() - stage_entered_at)) FILTER (WHERE won_at IS NULL AND lost_at IS NULL) / 86400)::numeric, 2)::float8 AS avg_days_in_stage
    FROM deals WHERE tenant_id = $1 AND pipeline_id = $2 GROUP BY stage_id) a ON a.stage_id = s.id
  WHERE s.tenant_id = $1 AND s.pipeline_id = $2 ORDER BY s.position, s.created_at, s.id`;

// The kanban (README's board query, without a period): per stage its count and total and its first 20
// deals, newest first, with their leads, as the `data` of Funil's GraphQL answer, in one statement.
// endCursor is Funil's cursor (base64url of `created_at|id`); a stage holds a next page when a 21st deal exists.
const KANBAN_SQL = `
  WITH agg AS (SELECT stage_id, count(*) AS n, sum(total) AS total FROM deals WHERE tenant_id = $1 AND pipeline_id = $2 GROUP BY stage_id),
  cols AS (
    SELECT s.position, s.created_at, s.id, s.name, COALESCE(a.n, 0)::int AS n, COALESCE(a.total, 0) AS total, page.nodes,
           translate(rtrim(replace(encode(convert_to(page.last_key, 'UTF8'), 'base64'), E'\n', ''), '='), '+/', '-_') AS last_cursor
    FROM stages s LEFT JOIN agg a ON a.stage_id = s.id
    CROSS JOIN LATERAL (
      SELECT COALESCE(json_agg(json_build_object('number', p.number, 'total', p.total::float8, 'lead', json_build_object('name', l.name, 'company', l.company))
                        ORDER BY p.created_at DESC, p.id DESC), '[]') AS nodes,
             (array_agg(${ts('p.created_at')} || '|' || p.id ORDER BY p.created_at, p.id))[1] AS last_key
      FROM (SELECT * FROM deals WHERE tenant_id = $1 AND pipeline_id = $2 AND stage_id = s.id ORDER BY created_at DESC, id DESC LIMIT $3) p
      JOIN leads l ON l.tenant_id = p.tenant_id AND l.id = p.lead_id
    ) page
    WHERE s.tenant_id = $1 AND s.pipeline_id = $2)
  SELECT json_build_object('data', json_build_object('pipelineBoard', json_build_object(
    'total_deals', (SELECT sum(n) FROM cols)::int,
    'total_amount', (SELECT sum(total) FROM cols)::float8,
    'stages', (SELECT json_agg(json_build_object('deal_count', n, 'total', total::float8, 'stage', json_build_object('name', name,
        'deals', json_build_object('totalCount', n, 'nodes', nodes, 'pageInfo', json_build_object('endCursor', last_cursor, 'hasNextPage', n > $3))))
      ORDER BY position, created_at, id) FROM cols))))::text AS body
  WHERE EXISTS (SELECT 1 FROM cols)`;

// The knowledge search (src/domains/knowledge/search.ts) written out by hand: the same tsquery (websearch
// syntax under the three configurations OR-ed, AND each prefix term), visibility, rank, order and
// headline; the hits' JSON and the snippet's escaping done by PostgreSQL, in one statement.
const Q_MAX = 500;
const PREFIX = /^([\p{L}\p{N}]+)\*+$/u;

/**
 * The search's tsquery for `q`: its words in websearch syntax under the three configurations OR-ed, AND
 * each `prefix*` term; its parameters numbered from `$first`.
 */
export function knowledgeTsquery(q: string, first: number): { tsq: string; params: unknown[] } {
  const words: string[] = [];
  const prefixes: string[] = [];
  for (const token of q.split(/\s+/)) {
    const prefix = PREFIX.exec(token);
    if (prefix) prefixes.push(prefix[1]);
    else if (token) words.push(token);
  }
  const params: unknown[] = [];
  const param = (value: unknown) => `$${first + params.push(value) - 1}`;
  const parts: string[] = [];
  if (words.length) {
    const w = param(words.join(' '));
    parts.push(
      `(websearch_to_tsquery('knowledge_simple', ${w}) || websearch_to_tsquery('knowledge_portuguese', ${w}) || websearch_to_tsquery('knowledge_english', ${w}))`,
    );
  }
  for (const p of prefixes) parts.push(`to_tsquery('knowledge_simple', ${param(`${p}:*`)})`);
  return { tsq: parts.join(' && '), params };
}

/** $1 tenant, $2 limit, $3 the assistant when there is one, then the tsquery's parameters. */
function searchSql(q: string, withAssistant: boolean): { sql: string; params: unknown[] } {
  const { tsq, params } = knowledgeTsquery(q, withAssistant ? 4 : 3);
  const visible = withAssistant
    ? `AND (k.assistant_id = $3 OR (k.assistant_id IS NULL AND NOT EXISTS (
         SELECT 1 FROM knowledge_exclusions e WHERE e.tenant_id = $1 AND e.item_id = k.id AND e.assistant_id = $3)))`
    : '';
  const headline = `ts_headline('knowledge_portuguese',
      CASE WHEN k.description = '' AND k.typed_text = '' AND k.file_text = '' THEN k.name
           ELSE left(k.description || E'\n' || k.typed_text || E'\n\n' || k.file_text, 250000) END,
      ${tsq}, 'StartSel=<mark>, StopSel=</mark>, MaxFragments=2, MaxWords=30, MinWords=12, FragmentDelimiter=" … "')`;
  const escaped = `btrim(replace(replace(replace(replace(replace(${headline}, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'),
      '&lt;mark&gt;', '<mark>'), '&lt;/mark&gt;', '</mark>'), E' \t\n\r')`;
  const sql = `
    WITH hits AS (
      SELECT k.id, k.updated_at, ts_rank_cd(k.search_vector, ${tsq}, 32) AS score
        FROM knowledge_items k
       WHERE k.tenant_id = $1 AND k.search_vector @@ (${tsq}) ${visible}
       ORDER BY score DESC, k.updated_at DESC, k.id
       LIMIT $2)
    SELECT ${withAssistant ? 'EXISTS (SELECT 1 FROM assistants WHERE tenant_id = $1 AND id = $3)' : 'true'} AS assistant_found,
           COALESCE((SELECT json_agg(json_build_object(
             'item', json_build_object('id', k.id, 'tenant_id', k.tenant_id, 'name', k.name, 'description', k.description,
               'content', CASE WHEN k.typed_text <> '' AND k.file_text <> '' THEN k.typed_text || E'\n\n' || k.file_text
                               WHEN k.typed_text <> '' THEN k.typed_text ELSE k.file_text END,
               'source_url', k.source_url, 'usage_instruction', k.usage_instruction, 'assistant_id', k.assistant_id,
               'excluded_assistant_ids', COALESCE((SELECT json_agg(e.assistant_id ORDER BY e.assistant_id) FROM knowledge_exclusions e
                                                    WHERE e.tenant_id = k.tenant_id AND e.item_id = k.id), '[]'),
               'file_name', k.file_name, 'file_type', k.file_type, 'file_size', k.file_size,
               'created_at', ${ts('k.created_at')}, 'updated_at', ${ts('k.updated_at')}),
             'score', h.score::float8,
             'snippet', ${escaped}) ORDER BY h.score DESC, h.updated_at DESC, h.id)
             FROM hits h JOIN knowledge_items k ON k.tenant_id = $1 AND k.id = h.id), '[]')::text AS hits`;
  return { sql, params };
}

/** A `pg` pool on the bench schema whose `query` counts the statements it sends. */
export function countingPool(connectionString: string, schema: string, poolSize: number) {
  const pool = new pg.Pool({ connectionString, max: poolSize, options: `-c search_path="${schema}"` });
  const statements = { count: 0 };
  const query = (sql: string, params: unknown[]) => {
    statements.count++;
    return pool.query(sql, params);
  };
  return { pool, statements, query };
}

export function send(res: http.ServerResponse, status: number, body: string) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(body);
}

export async function startRawServer(connectionString: string, schema: string, poolSize: number): Promise<RawServer> {
  const { pool, statements, query } = countingPool(connectionString, schema, poolSize);

  const server = http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? '/', 'http://raw');
      const tenantId = await tenantOfKey(query, req.headers.authorization);
      if (!tenantId) return send(res, 401, UNAUTHORIZED);
      if (url.pathname === '/knowledge/search') {
        const q = url.searchParams.get('q')?.trim();
        if (!q || q.length > Q_MAX) return send(res, 400, '{"code":"ERR_INVALID_INPUT","message":"Parâmetro q inválido"}');
        const rawLimit = Number(url.searchParams.get('limit') ?? 10);
        const limit = Number.isInteger(rawLimit) && rawLimit >= 1 && rawLimit <= 50 ? rawLimit : 10;
        const assistantId = url.searchParams.get('assistant_id') || null;
        if (assistantId && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(assistantId)) {
          return send(res, 400, '{"code":"ERR_INVALID_INPUT","message":"assistant_id inválido"}');
        }
        if (!/[\p{L}\p{N}]/u.test(q)) return send(res, 200, '[]');
        const search = searchSql(q, assistantId !== null);
        const {
          rows: [r],
        } = await query(search.sql, [tenantId, limit, ...(assistantId ? [assistantId] : []), ...search.params]);
        if (!r.assistant_found) return send(res, 404, '{"code":"ERR_NOT_FOUND","message":"Assistente não encontrado(a)"}');
        return send(res, 200, r.hits);
      }
      const m = /^\/pipelines\/([0-9a-f-]{36})\/(deals|board|kanban)$/.exec(url.pathname);
      if (!m) return send(res, 404, '{"code":"ERR_NOT_FOUND","message":"Rota não encontrada"}');
      const pipelineId = m[1];
      if (m[2] === 'kanban') {
        const { rows } = await query(KANBAN_SQL, [tenantId, pipelineId, 20]);
        if (!rows.length) return send(res, 200, '{"data":null,"errors":[{"message":"Pipeline não encontrado(a)"}]}');
        return send(res, 200, rows[0].body);
      }
      if (m[2] === 'deals') {
        const rawLimit = Number(url.searchParams.get('limit') ?? 20);
        const limit = Number.isInteger(rawLimit) && rawLimit >= 1 && rawLimit <= 100 ? rawLimit : 20;
        const rawPage = Number(url.searchParams.get('page') ?? 1);
        const page = Number.isInteger(rawPage) && rawPage >= 1 ? rawPage : 1;
        const {
          rows: [r],
        } = await query(LIST_SQL, [tenantId, pipelineId, limit, (page - 1) * limit]);
        const total = r.total_count as number;
        const pages = Math.ceil(total / limit);
        return send(
          res,
          200,
          `{"data":${r.data},"pagination":${JSON.stringify({ current_page: page, total_pages: pages, total_count: total, has_next: page < pages, has_prev: page > 1, next_cursor: null })}}`,
        );
      }
      const [pipeline, board] = await Promise.all([query(PIPELINE_SQL, [tenantId, pipelineId]), query(BOARD_SQL, [tenantId, pipelineId])]);
      if (!pipeline.rows.length) return send(res, 404, '{"code":"ERR_NOT_FOUND","message":"Pipeline não encontrado(a)"}');
      let deals = 0;
      let cents = 0n;
      const stages = board.rows.map((s) => {
        deals += s.deal_count;
        const [whole, frac = ''] = String(s.exact).split('.');
        cents += BigInt(whole) * 100n + BigInt((frac + '00').slice(0, 2));
        return `{"stage":${s.stage},"deal_count":${s.deal_count},"total":${s.total},"avg_days_in_stage":${JSON.stringify(s.avg_days_in_stage)}}`;
      });
      return send(
        res,
        200,
        `{"pipeline":${pipeline.rows[0].pipeline},"stages":[${stages.join(',')}],"total_deals":${deals},"total_amount":${Number(cents) / 100}}`,
      );
    } catch (e) {
      send(res, 500, JSON.stringify({ code: 'ERR_INTERNAL', message: String(e) }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    statements,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await pool.end();
    },
  };
}
