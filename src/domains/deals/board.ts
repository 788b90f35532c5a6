// The board (GET /backend/pipelines/{id}/board) and the deals list (GET /backend/pipelines/{id}/deals).
// The board is one GROUP BY computed by the database; the list is one statement that returns the page
// and the total count together, and checks the pipeline (and stage) exist: as rows for the resolvers,
// or, for the selections card-json.ts serves (REST's, and most GraphQL ones), as the JSON text of the
// whole page. Raw SQL: tenant filtered here.
import { Prisma, type Deal as DealRow, type Stage as StageRow } from '../../generated/prisma/client.js';
import { invalidInput, notFound } from '../../errors.js';
import type { Context } from '../../context/context.js';
import { dealConditions, dealOrder, parseDealFilter, type DealFilter, type DealFilterArgs } from './filters.js';
import { toNumber } from '../common/money.js';
import type { JsonFieldCompiler } from '../../schema/json-fields.js';
import { pageJson, planPage, type PagePlan, type PageType } from '../../schema/json-page.js';
import { dealCardSql, dealCardsSql, type DealCardSql } from './card-json.js';
import type { BoardSource, PageInfoSource } from './types.js';
import { cursorAfter, openSync, syncPage, syncSql, syncTake, type SyncArgs, type SyncWindow } from '../common/sync.js';
import { tenantIs } from '../../tenant-sql.js';
import { limitSql } from '../../limit-sql.js';
import { NO_COUNT, type CountColumns, type SnapshotCount } from '../../db/snapshot-counts.js';

/** A row of the board: a stage with its count, total (numeric as text) and average days in stage. */
export type BoardRow = StageRow & { deal_count: number; total: string; avg_days_in_stage: number | null };

/**
 * The board: the pipeline's stages in board order, each with its deals' count, total and average days in
 * stage under the filters (one GROUP BY), and the `extra` columns over `s`. The resolvers and the JSON
 * path (board-json.ts) read it alike.
 */
export function boardSql(tenant: Prisma.Sql, pipelineId: string, f: DealFilter, extra: Prisma.Sql[] = []): Prisma.Sql {
  return Prisma.sql`
    SELECT s.id, s.tenant_id, s.pipeline_id, s.name, s.color, s.kind::text AS kind, s.position, s.created_at,
           COALESCE(a.deal_count, 0)::int AS deal_count, COALESCE(a.total, 0)::text AS total, a.avg_days_in_stage
           ${extra.length ? Prisma.sql`, ${Prisma.join(extra)}` : Prisma.empty}
    FROM stages s
    LEFT JOIN (
      SELECT d.stage_id, count(*) AS deal_count, sum(d.total) AS total,
             round((avg(extract(epoch FROM now() - d.stage_entered_at)) FILTER (WHERE d.won_at IS NULL AND d.lost_at IS NULL) / 86400)::numeric, 2)::float8 AS avg_days_in_stage
      FROM deals d WHERE ${dealConditions(tenant, f)} GROUP BY d.stage_id
    ) a ON a.stage_id = s.id
    WHERE ${tenantIs(tenant, 's')} AND s.pipeline_id = ${pipelineId}::uuid
    ORDER BY s.position, s.created_at, s.id`;
}

export async function pipelineBoard(ctx: Context, pipelineId: string, args: DealFilterArgs): Promise<BoardSource> {
  const f = parseDealFilter(pipelineId, args);
  const rows = await ctx.db.$tenantQuery<BoardRow[]>((tenant) => boardSql(tenant, pipelineId, f));
  // A pipeline always keeps at least one stage: no rows means no such pipeline in this organisation.
  if (!rows.length) throw notFound('Pipeline');
  const chosen = f.stageId ? rows.filter((r) => r.id === f.stageId) : rows;
  if (!chosen.length) throw invalidInput('A etapa não pertence ao pipeline');
  const stages = chosen.map(({ deal_count, total, avg_days_in_stage, ...stage }) => ({
    stage: stage as StageRow,
    deal_count: Number(deal_count),
    total: toNumber(total),
    avg_days_in_stage: avg_days_in_stage == null ? null : Number(avg_days_in_stage),
  }));
  return {
    pipelineId,
    stages,
    total_deals: stages.reduce((n, s) => n + s.deal_count, 0),
    total_amount: toNumber(chosen.reduce((sum, r) => sum.plus(r.total), new Prisma.Decimal(0))),
  };
}

export interface DealListArgs extends DealFilterArgs, SyncArgs {
  page?: number | null;
  limit?: number | null;
}

interface ListQuery {
  pipelineId: string;
  filter: DealFilter;
  limit: number;
  page: number;
}

function listQuery(ctx: Context, pipelineId: string, args: DealListArgs): ListQuery {
  const filter = parseDealFilter(pipelineId, args);
  const limit = args.limit == null || args.limit < 1 || args.limit > 100 ? 20 : args.limit;
  const page = args.page == null || args.page < 1 ? 1 : args.page;
  return { pipelineId, filter, limit, page };
}

interface ListHead extends CountColumns {
  pipeline_ok: boolean;
  stage_ok: boolean;
}

/** The count of the deals under the page's filters, counted again only when the data may have changed. */
const dealCount = (ctx: Context, where: Prisma.Sql) => ctx.db.$counts.count(Prisma.sql`SELECT count(*) FROM deals d WHERE ${where}`);

/** The head columns of a page: the count (when wanted), and whether the pipeline and the stage exist. */
function headColumns(tenant: Prisma.Sql, q: ListQuery, count: SnapshotCount | null): Prisma.Sql {
  const stageOk = q.filter.stageId
    ? Prisma.sql`EXISTS (SELECT 1 FROM stages WHERE ${tenantIs(tenant)} AND pipeline_id = ${q.pipelineId}::uuid AND id = ${q.filter.stageId}::uuid)`
    : Prisma.sql`true`;
  return Prisma.sql`${count?.columns ?? NO_COUNT},
    EXISTS (SELECT 1 FROM pipelines WHERE ${tenantIs(tenant)} AND id = ${q.pipelineId}::uuid) AS pipeline_ok,
    ${stageOk} AS stage_ok`;
}

function checkHead(head: ListHead | undefined): void {
  if (!head?.pipeline_ok) throw notFound('Pipeline');
  if (!head.stage_ok) throw invalidInput('A etapa não pertence ao pipeline');
}

function pageInfo(q: ListQuery, totalCount: number | null): PageInfoSource {
  const total = Number(totalCount ?? 0);
  const totalPages = Math.ceil(total / q.limit);
  return {
    current_page: q.page,
    total_pages: totalPages,
    total_count: total,
    has_next: q.page < totalPages,
    has_prev: q.page > 1,
    next_cursor: null,
  };
}

type PageRow = DealRow & ListHead;

/** A page row's deal, without the head columns every row of the page carries. */
const withoutHead = ({ total_count: _c, count_snapshot: _n, pipeline_ok: _p, stage_ok: _s, ...deal }: PageRow) => deal as DealRow;

export async function pipelineDeals(
  ctx: Context,
  pipelineId: string,
  args: DealListArgs,
): Promise<{ data: DealRow[]; pagination: PageInfoSource }> {
  const q = listQuery(ctx, pipelineId, args);
  const sync = await openSync(ctx, 'deals', args, q.limit);
  if (sync) return syncedDeals(ctx, q, sync);
  let count!: SnapshotCount;
  const rows = await ctx.db.$tenantQuery<PageRow[]>((tenant) => {
    const where = dealConditions(tenant, q.filter);
    count = dealCount(ctx, where);
    return Prisma.sql`
    SELECT c.total_count, c.count_snapshot, c.pipeline_ok, c.stage_ok, p.*
    FROM (SELECT ${headColumns(tenant, q, count)}) c
    LEFT JOIN LATERAL (
      SELECT d.* FROM deals d WHERE ${where} ORDER BY ${Prisma.raw(dealOrder(q.filter))} ${limitSql(q.limit, (q.page - 1) * q.limit)}
    ) p ON true`;
  });
  checkHead(rows[0]);
  const data = rows.filter((r) => r.id != null).map(withoutHead);
  return { data, pagination: pageInfo(q, count.read(rows[0])) };
}

/**
 * A sync page of the list: the rows after the cursor by (updated_at, id), one more than the page to
 * know whether another follows; the counts cover the rows from this page on.
 */
async function syncedDeals(ctx: Context, q: ListQuery, w: SyncWindow): Promise<{ data: DealRow[]; pagination: PageInfoSource }> {
  let count!: SnapshotCount;
  const rows = await ctx.db.$tenantQuery<PageRow[]>((tenant) => {
    const where = Prisma.sql`${dealConditions(tenant, q.filter)} AND ${syncSql(w, 'd')}`;
    count = dealCount(ctx, where);
    return Prisma.sql`
    SELECT c.total_count, c.count_snapshot, c.pipeline_ok, c.stage_ok, p.*
    FROM (SELECT ${headColumns(tenant, q, count)}) c
    LEFT JOIN LATERAL (SELECT d.* FROM deals d WHERE ${where} ORDER BY d.updated_at, d.id ${limitSql(syncTake(w))}) p ON true`;
  });
  checkHead(rows[0]);
  const { rows: data, next } = syncPage(w, rows.filter((r) => r.id != null).map(withoutHead));
  return { data, pagination: syncPageInfo(q, w, count.read(rows[0]), next) };
}

/** A sync page's pagination: its counts cover the rows from this page on. */
function syncPageInfo(q: ListQuery, w: SyncWindow, totalCount: number | null, next: string | null): PageInfoSource {
  const total = Number(totalCount ?? 0);
  return {
    current_page: 1,
    total_pages: Math.ceil(total / q.limit),
    total_count: total,
    has_next: next != null,
    has_prev: w.after != null,
    next_cursor: next,
  };
}

/** DealPage on the JSON path (jsonField of Query.pipelineDeals). */
const DEAL_PAGE: PageType<DealCardSql> = {
  page: 'DealPage',
  item: 'Deal',
  pagination: 'DealPagination',
  paginationFields: new Set(['current_page', 'total_pages', 'total_count', 'has_next', 'has_prev', 'next_cursor', '__typename']),
  countedFields: new Set(['total_pages', 'total_count', 'has_next']),
  card: dealCardSql,
};

/**
 * A page of the deals list as JSON text in ONE statement (the key lookup aside): PostgreSQL counts, checks
 * the pipeline and stage, and writes the page's cards (card-json.ts); the text is spliced as it comes.
 */
export async function pipelineDealsJson(
  ctx: Context,
  pipelineId: string,
  args: DealListArgs,
  plan: PagePlan<DealCardSql>,
): Promise<string> {
  const q = listQuery(ctx, pipelineId, args);
  const sync = await openSync(ctx, 'deals', args, q.limit);
  const card = plan.card;
  let count = null as SnapshotCount | null;
  const [head] = await ctx.db.$tenantQueryDirect<
    ListHead & { data: string | null; last_at: Date | null; last_id: string | null; more: boolean }
  >((tenant) => {
    const filter = dealConditions(tenant, q.filter);
    const where = sync ? Prisma.sql`${filter} AND ${syncSql(sync, 'd')}` : filter;
    const orderText = sync ? 'd.updated_at ASC, d.id ASC' : dealOrder(q.filter);
    const order = Prisma.raw(orderText);
    const offset = sync ? 0 : (q.page - 1) * q.limit;
    const page = Prisma.sql`(SELECT d.* FROM deals d WHERE ${where} ORDER BY ${order} ${limitSql(q.limit, offset)})`;
    const data = card ? dealCardsSql(card, page, orderText) : Prisma.sql`NULL::text`;
    // A sync page's next cursor: its last row, when a row follows it.
    const next = sync
      ? Prisma.sql`, l.updated_at AS last_at, l.id AS last_id, EXISTS (SELECT 1 FROM deals d WHERE ${where} ORDER BY ${order} ${limitSql(1, q.limit, true)}) AS more
        FROM (SELECT NULL) one LEFT JOIN LATERAL (SELECT d.updated_at, d.id FROM deals d WHERE ${where} ORDER BY ${order} ${limitSql(1, q.limit - 1, true)}) l ON true`
      : Prisma.empty;
    count = plan.counted ? dealCount(ctx, where) : null;
    return Prisma.sql`SELECT ${headColumns(tenant, q, count)}, ${data} AS data ${next}`;
  });
  checkHead(head);
  const info = (sync
    ? syncPageInfo(
        q,
        sync,
        count?.read(head) ?? null,
        head.more && head.last_id ? cursorAfter(sync, { updated_at: head.last_at!, id: head.last_id }) : null,
      )
    : pageInfo(q, count?.read(head) ?? null)) as unknown as Record<string, unknown>;
  return pageJson(DEAL_PAGE, plan, head.data, info);
}

/** Query.pipelineDeals served as JSON text when the selection allows (schema/json-fields.ts). */
export const dealPageJson: JsonFieldCompiler = (selection) => {
  const plan = planPage(DEAL_PAGE, selection);
  return plan && ((ctx, { id, ...args }) => pipelineDealsJson(ctx, id as string, args as DealListArgs, plan));
};
