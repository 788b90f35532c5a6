// Ranked full-text search over the items an assistant sees (or all items of the organisation), on the
// generated, GIN-indexed search_vector (migration 20261123141200_knowledge). The query runs under the same
// three unaccenting configurations as the vector, OR-ed, so "orcamento" finds "Orçamento" and a Portuguese
// or English inflection finds its stem; websearch syntax gives phrases ("…"), OR and -exclusions; a word
// ending in * is a prefix. Score: ts_rank_cd normalised to 0..1 (weights: name > description > content).
import { Prisma, type KnowledgeItem } from '../../generated/prisma/client.js';
import { invalidParameter } from '../../errors.js';
import type { Context } from '../../context/context.js';
import type { Selection } from '../common/types.js';
import { assistantNotFound } from './assistants.js';
import { tenantIs } from '../../tenant-sql.js';

export interface SearchArgs {
  q?: string | null;
  assistant_id?: string | null;
  limit?: number | null;
}

export interface SearchHit<Item> {
  item: Item;
  score: number;
  snippet: string;
}

const Q_MAX = 500;
const LIMIT_DEFAULT = 10;
const LIMIT_MAX = 50;
/** The part of content the vector indexes (see the migration); headlines look at the same part. */
const INDEXED_CONTENT_CHARS = 250_000;
const HEADLINE_OPTIONS = 'StartSel=<mark>, StopSel=</mark>, MaxFragments=2, MaxWords=30, MinWords=12, FragmentDelimiter=" … "';

/** The query's prefix terms (`orça*`) and the rest, for websearch_to_tsquery. */
function parseQuery(q: string): { text: string; prefixes: string[] } {
  const prefixes: string[] = [];
  const rest: string[] = [];
  for (const token of q.split(/\s+/)) {
    const prefix = /^([\p{L}\p{N}]+)\*+$/u.exec(token);
    if (prefix) prefixes.push(prefix[1]);
    else if (token) rest.push(token);
  }
  return { text: rest.join(' '), prefixes };
}

/** The tsquery of a search: websearch syntax under the three configurations, AND every prefix term. */
function tsquery({ text, prefixes }: { text: string; prefixes: string[] }): Prisma.Sql {
  const parts = [
    ...(text
      ? [
          Prisma.sql`(websearch_to_tsquery('knowledge_simple', ${text}) || websearch_to_tsquery('knowledge_portuguese', ${text}) || websearch_to_tsquery('knowledge_english', ${text}))`,
        ]
      : []),
    // Prefixes match the unstemmed (simple) lexemes: "orcam*" finds "orçamento" and "orçamentos".
    ...prefixes.map((p) => Prisma.sql`to_tsquery('knowledge_simple', ${p + ':*'})`),
  ];
  return Prisma.join(parts, ' && ');
}

/**
 * The search statement for one organisation: ids, scores and highlighted snippets, best first. Exported
 * for the test that EXPLAINs it.
 */
export function searchStatement(tenant: Prisma.Sql, args: { q: string; assistantId: string | null; limit: number }): Prisma.Sql {
  const visible = args.assistantId
    ? Prisma.sql`AND (k.assistant_id = ${args.assistantId}::uuid OR (k.assistant_id IS NULL AND NOT EXISTS (
        SELECT 1 FROM knowledge_exclusions e WHERE ${tenantIs(tenant, 'e')} AND e.item_id = k.id AND e.assistant_id = ${args.assistantId}::uuid)))`
    : Prisma.empty;
  // The tsquery is written out where it is used, not read from a CTE: as an expression of the statement's
  // parameters the planner folds it to a constant and can use the GIN index for @@.
  const tsq = tsquery(parseQuery(args.q));
  return Prisma.sql`
    WITH hits AS (
      SELECT k.id, k.updated_at, ts_rank_cd(k.search_vector, ${tsq}, 32) AS score
        FROM knowledge_items k
       WHERE ${tenantIs(tenant, 'k')} AND k.search_vector @@ (${tsq}) ${visible}
       ORDER BY score DESC, k.updated_at DESC, k.id
       LIMIT ${args.limit})
    SELECT h.id, h.score::float8 AS score,
           ts_headline('knowledge_portuguese',
                       CASE WHEN k.description = '' AND k.typed_text = '' AND k.file_text = '' THEN k.name
                            ELSE left(k.description || E'\n' || k.typed_text || E'\n\n' || k.file_text, ${INDEXED_CONTENT_CHARS}) END,
                       ${tsq}, ${HEADLINE_OPTIONS}) AS snippet
      FROM hits h JOIN knowledge_items k ON ${tenantIs(tenant, 'k')} AND k.id = h.id
     ORDER BY h.score DESC, h.updated_at DESC, h.id`;
}

/** The headline as HTML: the text escaped, the matches in <mark>. */
function safeSnippet(headline: string): string {
  return headline
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/&lt;(\/?)mark&gt;/g, '<$1mark>')
    .trim();
}

/**
 * Searches the items `assistant_id` sees (all items of the organisation without it). The hits' items are
 * read with the caller's selection (`query`), in one query.
 */
export async function searchKnowledge(ctx: Context, args: SearchArgs, query: Selection = {}): Promise<SearchHit<KnowledgeItem>[]> {
  const q = args.q?.trim();
  if (!q) throw invalidParameter('q', 'é obrigatório');
  if (q.length > Q_MAX) throw invalidParameter('q', `aceita no máximo ${Q_MAX} caracteres`);
  const limit = args.limit == null || args.limit < 1 || args.limit > LIMIT_MAX ? LIMIT_DEFAULT : args.limit;
  const assistantId = args.assistant_id ?? null;
  if (assistantId && !(await ctx.db.assistant.findUnique({ where: { id: assistantId }, select: { id: true } }))) throw assistantNotFound();
  // Nothing searchable (only punctuation): no hits, and no empty-query notice from PostgreSQL.
  if (!/[\p{L}\p{N}]/u.test(q)) return [];
  const rows = await ctx.db.$tenantQuery<{ id: string; score: number; snippet: string }[]>((tenant) =>
    searchStatement(tenant, { q, assistantId, limit }),
  );
  if (!rows.length) return [];
  const items = await ctx.db.knowledgeItem.findMany({ ...query, where: { id: { in: rows.map((r) => r.id) } } });
  const byId = new Map(items.map((i) => [i.id, i]));
  return rows.filter((r) => byId.has(r.id)).map((r) => ({ item: byId.get(r.id)!, score: r.score, snippet: safeSnippet(r.snippet) }));
}
