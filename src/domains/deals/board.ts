// The board (GET /backend/pipelines/{id}/board) and the deals list (GET /backend/pipelines/{id}/deals).
// The board is one GROUP BY computed by the database; the list is one statement that returns the page
// and the total count together, and checks the pipeline (and stage) exist. Raw SQL: tenant filtered here.
import { Prisma, type Deal as DealRow, type Stage as StageRow } from '../../generated/prisma/client.js';
import { requirePermission } from '../../auth/viewer.js';
import { invalidInput, notFound } from '../../errors.js';
import type { Context } from '../../context/context.js';
import { dealConditions, dealOrder, parseDealFilter, type DealFilterArgs } from './filters.js';
import { toNumber } from '../common/money.js';
import type { BoardSource, PageInfoSource } from './types.js';

type SummaryRow = StageRow & { deal_count: number; total: Prisma.Decimal | number | null };

export async function pipelineBoard(ctx: Context, pipelineId: string, args: DealFilterArgs): Promise<BoardSource> {
  requirePermission(ctx.viewer, 'pipeline.view');
  const f = parseDealFilter(pipelineId, args);
  const rows = await ctx.db.$tenantQuery<SummaryRow[]>((tenant) => Prisma.sql`
    SELECT s.id, s.tenant_id, s.pipeline_id, s.name, s.color, s.kind::text AS kind, s.position, s.created_at,
           COALESCE(a.deal_count, 0)::int AS deal_count, COALESCE(a.total, 0) AS total
    FROM stages s
    LEFT JOIN (
      SELECT d.stage_id, count(*) AS deal_count, sum(d.total) AS total FROM deals d WHERE ${dealConditions(tenant, f)} GROUP BY d.stage_id
    ) a ON a.stage_id = s.id
    WHERE s.tenant_id = ${tenant} AND s.pipeline_id = ${pipelineId}::uuid
    ORDER BY s.position, s.created_at, s.id`);
  // A pipeline always keeps at least one stage: no rows means no such pipeline in this organisation.
  if (!rows.length) throw notFound('Pipeline');
  const chosen = f.stageId ? rows.filter((r) => r.id === f.stageId) : rows;
  if (!chosen.length) throw invalidInput('A etapa não pertence ao pipeline');
  const stages = chosen.map(({ deal_count, total, ...stage }) => ({ stage: stage as StageRow, deal_count: Number(deal_count), total: toNumber(total) }));
  return {
    pipelineId,
    stages,
    total_deals: stages.reduce((n, s) => n + s.deal_count, 0),
    total_amount: toNumber(chosen.reduce((sum, r) => sum.plus(r.total ?? 0), new Prisma.Decimal(0))),
  };
}

export interface DealListArgs extends DealFilterArgs {
  page?: number | null;
  limit?: number | null;
}

type PageRow = DealRow & { total_count: number; pipeline_ok: boolean; stage_ok: boolean };

export async function pipelineDeals(ctx: Context, pipelineId: string, args: DealListArgs): Promise<{ data: DealRow[]; pagination: PageInfoSource }> {
  requirePermission(ctx.viewer, 'pipeline.view');
  const f = parseDealFilter(pipelineId, args);
  const limit = args.limit == null || args.limit < 1 || args.limit > 100 ? 20 : args.limit;
  const page = args.page == null || args.page < 1 ? 1 : args.page;
  const rows = await ctx.db.$tenantQuery<PageRow[]>((tenant) => {
    const where = dealConditions(tenant, f);
    const stageOk = f.stageId
      ? Prisma.sql`EXISTS (SELECT 1 FROM stages WHERE tenant_id = ${tenant} AND pipeline_id = ${pipelineId}::uuid AND id = ${f.stageId}::uuid)`
      : Prisma.sql`true`;
    return Prisma.sql`
    SELECT c.total_count, c.pipeline_ok, c.stage_ok, p.*
    FROM (
      SELECT (SELECT count(*) FROM deals d WHERE ${where})::int AS total_count,
             EXISTS (SELECT 1 FROM pipelines WHERE tenant_id = ${tenant} AND id = ${pipelineId}::uuid) AS pipeline_ok,
             ${stageOk} AS stage_ok
    ) c
    LEFT JOIN LATERAL (
      SELECT d.* FROM deals d WHERE ${where} ORDER BY ${dealOrder(f)} LIMIT ${limit} OFFSET ${(page - 1) * limit}
    ) p ON true`;
  });
  const head = rows[0];
  if (!head?.pipeline_ok) throw notFound('Pipeline');
  if (!head.stage_ok) throw invalidInput('A etapa não pertence ao pipeline');
  const total = Number(head.total_count);
  const totalPages = Math.ceil(total / limit);
  const data = rows
    .filter((r) => r.id != null)
    .map(({ total_count: _c, pipeline_ok: _p, stage_ok: _s, ...deal }) => deal as DealRow);
  return {
    data,
    pagination: { current_page: page, total_pages: totalPages, total_count: total, has_next: page < totalPages, has_prev: page > 1 },
  };
}
