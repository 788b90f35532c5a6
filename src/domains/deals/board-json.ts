// Query.pipelineBoard as JSON text (schema/json-fields.ts): the kanban a front end renders — each
// column's count and total and its first deals with their leads (the README's board query) — in ONE
// statement (the key lookup aside): the board's GROUP BY (board.ts boardSql), each column's page as card JSON
// (card-json.ts) with its cursors and whether more follow, read per stage over the stage index. The
// counts, totals and text come out as the resolvers write them. Selections it does not serve (the
// pipeline, edges, Stage.deals arguments other than a literal `first`, a board with `stage_id`) go to
// the resolvers, as does any error (a missing pipeline, a bad filter).
import { Kind, type FieldNode } from 'graphql';
import { Prisma } from '../../generated/prisma/client.js';
import { notFound } from '../../errors.js';
import type { Context } from '../../context/context.js';
import type { JsonFieldCompiler, SelectedField } from '../../schema/json-fields.js';
import { isoSql, jsonObject, objectSelect, selectList } from '../../schema/json-sql.js';
import { toNumber } from '../common/money.js';
import { dealCardSql, dealCardsSql, type DealCardSql } from './card-json.js';
import { dealConditions, parseDealFilter, type DealFilterArgs } from './filters.js';
import { boardSql, type BoardRow } from './board.js';
import { limitSql } from '../../limit-sql.js';

/** Lead fields of Deal.lead over `l` (the deal's lead, joined by the card). */
const LEAD: Record<string, string> = {
  id: 'l.id',
  name: 'l.name',
  surname: 'l.surname',
  phone: 'l.phone',
  whatsapp_user_id: 'l.whatsapp_user_id',
  whatsapp_username: 'l.whatsapp_username',
  email: 'l.email',
  company: 'l.company',
  avatar_url: 'l.avatar_url',
  created_at: isoSql('l.created_at'),
  updated_at: isoSql('l.updated_at'),
  __typename: `'Lead'`,
};

/** The card of a board column's deals: card-json's fields, and `lead` as an object of its plain fields. */
function nodeCard(selection: readonly SelectedField[]): DealCardSql | null {
  const columns: string[] = [];
  let lead = false;
  let todo = false;
  for (const f of selection) {
    if (f.name === 'lead') {
      const select = objectSelect(f.sub('Lead'), LEAD);
      const column = select && selectList([[f.key, `(SELECT row_to_json(x) FROM (SELECT ${select}) x)`]]);
      if (!column) return null;
      columns.push(column);
      lead = true;
      continue;
    }
    // One field at a time, so that the columns keep the selection's order around `lead`.
    const card = dealCardSql([f]);
    if (!card) return null;
    columns.push(card.columns);
    lead ||= card.lead;
    todo ||= card.todo;
  }
  return columns.length ? { columns: columns.join(', '), lead, todo } : null;
}

type Part = { key: string; kind: string; sub?: Part[] };

interface DealsPlan {
  key: string;
  first: number;
  parts: Part[];
  card?: DealCardSql;
}

interface BoardPlan {
  parts: Part[];
  /** Stage.deals, when selected (once, under one key). */
  deals?: DealsPlan;
}

const STAGE_FIELDS = new Set(['id', 'pipeline_id', 'name', 'color', 'kind', 'position', '__typename']);
const SUMMARY_FIELDS = new Set(['deal_count', 'total', 'avg_days_in_stage', '__typename']);
const PAGE_INFO_FIELDS = new Set(['startCursor', 'endCursor', 'hasNextPage', 'hasPreviousPage']);

/** `first` of Stage.deals when it is its only argument, a literal from 1 to 100 (20 when absent); else null. */
function firstOf(f: SelectedField): number | null {
  const literal = (n: FieldNode): string | null | undefined => {
    const args = n.arguments ?? [];
    if (!args.length) return undefined;
    const [arg] = args;
    return args.length === 1 && arg.name.value === 'first' && arg.value.kind === Kind.INT ? arg.value.value : null;
  };
  const values = new Set(f.nodes.map(literal));
  if (values.size !== 1 || values.has(null)) return null;
  const [value] = values;
  if (value === undefined) return 20;
  const first = Number(value);
  return first >= 1 && first <= 100 ? first : null;
}

function planDeals(f: SelectedField): DealsPlan | null {
  const first = firstOf(f);
  const sub = first == null ? null : f.sub('StageDealsConnection');
  if (first == null || !sub?.length) return null;
  const plan: DealsPlan = { key: f.key, first, parts: [] };
  for (const s of sub) {
    if (s.name === 'totalCount') plan.parts.push({ key: s.key, kind: 'totalCount' });
    else if (s.name === 'nodes' && !plan.card) {
      const nodes = s.sub('Deal');
      const card = nodes?.length ? nodeCard(nodes) : null;
      if (!card) return null;
      plan.card = card;
      plan.parts.push({ key: s.key, kind: 'nodes' });
    } else if (s.name === 'pageInfo') {
      const info = s.sub('PageInfo');
      if (!info?.length || info.some((i) => !PAGE_INFO_FIELDS.has(i.name))) return null;
      plan.parts.push({ key: s.key, kind: 'pageInfo', sub: info.map((i) => ({ key: i.key, kind: i.name })) });
    } else return null;
  }
  return plan;
}

/** The plan for a selection of PipelineBoard; null when a part of it is not served here. */
export function planBoard(selection: readonly SelectedField[]): BoardPlan | null {
  const plan: BoardPlan = { parts: [] };
  for (const f of selection) {
    if (f.name === 'total_deals' || f.name === 'total_amount' || f.name === '__typename') {
      plan.parts.push({ key: f.key, kind: f.name });
      continue;
    }
    if (f.name !== 'stages') return null;
    const summary = f.sub('BoardStageSummary');
    if (!summary?.length) return null;
    const parts: Part[] = [];
    for (const s of summary) {
      if (SUMMARY_FIELDS.has(s.name)) {
        parts.push({ key: s.key, kind: s.name });
        continue;
      }
      if (s.name !== 'stage') return null;
      const stage = s.sub('Stage', true);
      if (!stage?.length) return null;
      const stageParts: Part[] = [];
      for (const t of stage) {
        if (STAGE_FIELDS.has(t.name) && !t.nodes.some((n) => n.arguments?.length)) stageParts.push({ key: t.key, kind: t.name });
        else if (t.name === 'deals' && !plan.deals) {
          const deals = planDeals(t);
          if (!deals) return null;
          plan.deals = deals;
          stageParts.push({ key: t.key, kind: 'deals' });
        } else return null;
      }
      parts.push({ key: s.key, kind: 'stage', sub: stageParts });
    }
    plan.parts.push({ key: f.key, kind: 'stages', sub: parts });
  }
  return plan;
}

type StageRow = BoardRow & {
  total_count: number | null;
  nodes: string | null;
  start_key: string | null;
  end_key: string | null;
  more: boolean | null;
};

/** Stage.deals' cursor (stage-deals.ts dealCursor) from `created_at|id` as PostgreSQL wrote it. */
const cursorOf = (key: string | null) => (key == null ? null : Buffer.from(key).toString('base64url'));

async function boardJson(ctx: Context, pipelineId: string, args: DealFilterArgs, plan: BoardPlan): Promise<string> {
  // One column (stage_id) is the resolvers' (its own checks and errors).
  if (args.stage_id) throw new Error('stage_id: served by the resolvers');
  const f = parseDealFilter(pipelineId, args);
  const deals = plan.deals;
  const parts = (kind: string) => deals?.parts.find((p) => p.kind === kind);
  const info = new Set(parts('pageInfo')?.sub?.map((p) => p.kind));
  // Stage.deals has no filters here: its count is the board's unless the board is filtered.
  const boardFiltered = !!(args.search?.trim() || args.period?.trim());
  const ownCount = !!parts('totalCount') && boardFiltered;
  const rows = await ctx.db.$tenantQueryDirect<StageRow>((tenant) => {
    const columns: Prisma.Sql[] = [];
    if (deals) {
      const where = Prisma.sql`${dealConditions(tenant, parseDealFilter(pipelineId, {}), false)} AND d.stage_id = s.id`;
      const orderText = 'd.created_at DESC, d.id DESC';
      const order = Prisma.raw(orderText);
      const page = Prisma.sql`(SELECT d.* FROM deals d WHERE ${where} ORDER BY ${order} ${limitSql(deals.first)})`;
      const key = Prisma.raw(`${isoSql('d.created_at')} || '|' || d.id`);
      if (deals.card) columns.push(Prisma.sql`${dealCardsSql(deals.card, page, orderText)} AS nodes`);
      if (info.has('startCursor')) columns.push(Prisma.sql`(SELECT ${key} FROM ${page} d ORDER BY ${order} LIMIT 1) AS start_key`);
      if (info.has('endCursor')) columns.push(Prisma.sql`(SELECT ${key} FROM ${page} d ORDER BY d.created_at, d.id LIMIT 1) AS end_key`);
      if (info.has('hasNextPage'))
        columns.push(Prisma.sql`EXISTS (SELECT 1 FROM deals d WHERE ${where} ORDER BY ${order} ${limitSql(1, deals.first, true)}) AS more`);
      if (ownCount) columns.push(Prisma.sql`(SELECT count(*) FROM deals d WHERE ${where})::int AS total_count`);
    }
    return boardSql(tenant, pipelineId, f, columns);
  });
  // A pipeline always keeps at least one stage: no rows means no such pipeline in this organisation.
  if (!rows.length) throw notFound('Pipeline');

  const dealsJson = (r: StageRow) =>
    jsonObject(
      deals!.parts.map(({ key, kind, sub }) => {
        if (kind === 'totalCount') return [key, String(ownCount ? r.total_count : r.deal_count)];
        if (kind === 'nodes') return [key, r.nodes ?? '[]'];
        const pageInfo: Record<string, unknown> = {
          startCursor: cursorOf(r.start_key),
          endCursor: cursorOf(r.end_key),
          hasNextPage: r.more === true,
          hasPreviousPage: false,
        };
        return [key, jsonObject(sub!.map((p) => [p.key, JSON.stringify(pageInfo[p.kind])]))];
      }),
    );
  const stageJson = (r: StageRow, parts: Part[]) =>
    jsonObject(
      parts.map(({ key, kind }) => {
        if (kind === 'deals') return [key, dealsJson(r)];
        if (kind === '__typename') return [key, '"Stage"'];
        return [key, JSON.stringify(r[kind as 'id' | 'pipeline_id' | 'name' | 'color' | 'kind' | 'position'])];
      }),
    );
  const summaryJson = (r: StageRow, parts: Part[]) =>
    jsonObject(
      parts.map(({ key, kind, sub }) => {
        if (kind === 'stage') return [key, stageJson(r, sub!)];
        if (kind === 'deal_count') return [key, String(Number(r.deal_count))];
        if (kind === 'total') return [key, JSON.stringify(toNumber(r.total))];
        if (kind === 'avg_days_in_stage') return [key, JSON.stringify(r.avg_days_in_stage == null ? null : Number(r.avg_days_in_stage))];
        return [key, '"BoardStageSummary"'];
      }),
    );
  return jsonObject(
    plan.parts.map(({ key, kind, sub }) => {
      if (kind === 'stages') return [key, `[${rows.map((r) => summaryJson(r, sub!)).join(',')}]`];
      if (kind === 'total_deals') return [key, String(rows.reduce((n, r) => n + Number(r.deal_count), 0))];
      if (kind === 'total_amount')
        return [key, JSON.stringify(toNumber(rows.reduce((sum, r) => sum.plus(r.total), new Prisma.Decimal(0))))];
      return [key, '"PipelineBoard"'];
    }),
  );
}

/** Query.pipelineBoard served as JSON text when the selection allows (schema/json-fields.ts). */
export const boardJsonField: JsonFieldCompiler = (selection) => {
  const plan = planBoard(selection);
  return plan && ((ctx, { id, ...args }) => boardJson(ctx, id as string, args as DealFilterArgs, plan));
};
