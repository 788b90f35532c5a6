// GraphQL types of deals: Deal (contact fields read from the lead at read time, through dataloaders),
// product lines, the board summary, the list page, activities and history. Graph-only edges
// (Deal.lead, Stage.deals, Lead.deals…) carry GRAPH_ONLY so REST answers keep the spec's shapes.
import { resolveCursorConnection } from '@pothos/plugin-relay';
import { builder, GRAPH_ONLY } from '../../schema/builder.js';
import { firstOfCapArg, listCap, takeOfFirst } from '../../schema/list-bounds.js';
import { STAGES_MAX } from '../pipelines/validate.js';
import type { Deal as DealRow, Stage as StageRow } from '../../generated/prisma/client.js';
import { User } from '../accounts/types.js';
import { Lead, Tag } from '../leads/types.js';
import { Pipeline, Stage } from '../pipelines/types.js';
import { dealExtras, extrasOf, leadById, stageById, userById } from './loaders.js';
import type { Context } from '../../context/context.js';
import type { GraphQLResolveInfo } from 'graphql';
import { selectsAny } from './selection.js';
import { pothosFields, type SqlFields } from '../../schema/sql-fields.js';
import { DEAL_CARD, isList, LINE_FIELDS } from './card.js';
import type { DealChangeSource } from './live.js';
import { dealCursor, stageDealCounts, stageDeals, withTotalCount, type CountedConnection } from './stage-deals.js';

export const DealSort = builder.enumType('DealSort', {
  description: 'Order of deals: `recent` (newest first, the default) or `oldest`.',
  values: { recent: { value: 'recent' }, oldest: { value: 'oldest' } } as const,
});

export const DealDateMode = builder.enumType('DealDateMode', {
  description: 'Which date the period filter uses: `created` (default), `won` or `lost`.',
  values: { created: { value: 'created' }, won: { value: 'won' }, lost: { value: 'lost' } } as const,
});

export const DealProduct = builder.prismaObject('DealProduct', {
  description: 'A product line of a deal: name and price copied when the line was added.',
  fields: (t) => pothosFields(t, LINE_FIELDS),
});

/** Fields of Deal read from `dealExtras`; a list whose selection has any of them primes the page. */
const EXTRAS_FIELDS = new Set(Object.entries(DEAL_CARD).flatMap(([name, f]) => (isList(f) || f.lead || f.todo ? [name] : [])));

/** Loads the extras of a page of deals in one batch before their fields resolve, when they are selected. */
export async function primeExtras(ctx: Context, info: GraphQLResolveInfo, deals: DealRow[], deep = false): Promise<DealRow[]> {
  if (deals.length && selectsAny(info, EXTRAS_FIELDS, deep)) await dealExtras(ctx).loadMany(deals.map((d) => d.id));
  return deals;
}

const LIST_TYPES = { DealProduct, Tag };

/** The Deal fields of the card's declarations (card.ts): lead fields, lists and todo counts read the extras. */
const cardFields: SqlFields<DealRow> = Object.fromEntries(
  Object.entries(DEAL_CARD).flatMap(([name, f]) => {
    if (isList(f)) return [];
    const from = f.lead;
    const todo = f.todo;
    if (from) return [[name, { ...f, resolve: (d: DealRow, ctx: Context) => extrasOf(ctx, d.id, (e) => e.lead?.[from] ?? null) }]];
    if (todo) return [[name, { ...f, resolve: (d: DealRow, ctx: Context) => extrasOf(ctx, d.id, (e) => e[todo]) }]];
    return [[name, f]];
  }),
);

export const Deal = builder.prismaObject('Deal', {
  description: 'An opportunity inside a stage. It always points to a lead; contact fields are read from the lead at read time.',
  fields: (t) => {
    const scalars: Record<string, never> = pothosFields(t, cardFields);
    // In the card's order: its lists between the lead fields and the todo counts.
    const card = Object.fromEntries(
      Object.entries(DEAL_CARD).map(([name, f]) => {
        if (!isList(f)) return [name, scalars[name]];
        const key = name as 'products' | 'tags';
        return [
          name,
          t.field({
            type: [LIST_TYPES[f.type]] as never,
            args: firstOfCapArg(f.cap),
            extensions: listCap(f.cap, f.sized),
            description: f.description,
            resolve: (d, args, ctx) => extrasOf(ctx, d.id, (e) => e[key].slice(0, takeOfFirst(args.first, f.cap))) as never,
          }),
        ];
      }),
    ) as Record<string, never>;
    return {
      ...card,
      lead: t.field({
        type: Lead,
        extensions: GRAPH_ONLY,
        description: 'The linked lead.',
        resolve: async (d, _, ctx) => (await leadById(ctx).load(d.lead_id))!,
      }),
      stage: t.field({
        type: Stage,
        extensions: GRAPH_ONLY,
        description: 'The current stage.',
        resolve: async (d, _, ctx) => (await stageById(ctx).load(d.stage_id))!,
      }),
      owner: t.field({
        type: User,
        nullable: true,
        extensions: GRAPH_ONLY,
        description: 'The responsible user.',
        resolve: (d, _, ctx) => (d.owner_id ? userById(ctx).load(d.owner_id) : null),
      }),
    };
  },
});

// Graph edges added to other domains' types.

builder.prismaObjectField('Stage', 'deals', (t) =>
  t.connection(
    {
      type: Deal,
      extensions: GRAPH_ONLY,
      description: 'Deals in this column, filtered like the board; at most 100 per page (default 20).',
      args: {
        search: t.arg.string({ description: 'Deal number, or text in the lead’s name or company.' }),
        sort: t.arg({ type: DealSort, description: 'Default recent.' }),
        mode: t.arg({ type: DealDateMode, description: 'Date the period filter uses. Default created.' }),
        period: t.arg.string({ description: '7d, 30d, 1y or custom.' }),
        from: t.arg.string({ description: 'Start (inclusive, ISO 8601) with period=custom.' }),
        to: t.arg.string({ description: 'End (inclusive, ISO 8601) with period=custom.' }),
      },
      resolve: async (stage: StageRow, args, ctx, info) => {
        const filters = { search: args.search, sort: args.sort, mode: args.mode, period: args.period, from: args.from, to: args.to };
        const connection = await resolveCursorConnection<Promise<DealRow[]>>(
          { args, toCursor: (d) => dealCursor(d), defaultSize: 20, maxSize: 100 },
          async ({ after, before, limit, inverted }) => {
            const deals = await stageDeals(ctx).load({
              stageId: stage.id,
              pipelineId: stage.pipeline_id,
              args: filters,
              after,
              before,
              limit,
              inverted,
            });
            return primeExtras(ctx, info, deals, true);
          },
        );
        return withTotalCount(connection, () =>
          stageDealCounts(ctx).load({ stageId: stage.id, pipelineId: stage.pipeline_id, args: filters }),
        );
      },
    },
    {
      fields: (c) => ({
        totalCount: c.int({
          description: 'Deals in this column under the filters, across all pages.',
          resolve: (connection) => (connection as unknown as CountedConnection).totalCount(),
        }),
      }),
    },
  ),
);

builder.prismaObjectField('Lead', 'deals', (t) =>
  t.relatedConnection('deals', {
    cursor: 'id',
    extensions: GRAPH_ONLY,
    description: 'Deals linked to this lead, newest first (at most 100 per page).',
    maxSize: 100,
    defaultSize: 20,
    totalCount: true,
    query: { orderBy: [{ created_at: 'desc' }, { id: 'desc' }] },
  }),
);

export interface StageSummarySource {
  stage: StageRow;
  deal_count: number;
  total: number;
  avg_days_in_stage: number | null;
}

export const BoardStage = builder.objectRef<StageSummarySource>('BoardStageSummary').implement({
  description: 'One board column: the stage, how many deals match the filters in it and the sum of their totals.',
  fields: (t) => ({
    stage: t.field({ type: Stage, resolve: (s) => s.stage }),
    deal_count: t.exposeInt('deal_count'),
    total: t.exposeFloat('total', { description: 'Σ of the deals’ totals.' }),
    avg_days_in_stage: t.exposeFloat('avg_days_in_stage', {
      nullable: true,
      description:
        'Average days the open deals (neither won nor lost) matching the filters have been in this stage (since `stage_entered_at`), to 2 decimals; null without open deals.',
    }),
  }),
});

export interface BoardSource {
  pipelineId: string;
  stages: StageSummarySource[];
  total_deals: number;
  total_amount: number;
}

export const Board = builder.objectRef<BoardSource>('PipelineBoard').implement({
  description: 'A pipeline board: per-stage counts and totals, computed by the database. No deals are returned.',
  fields: (t) => ({
    pipeline: t.prismaField({
      type: Pipeline,
      description: 'The pipeline with its stages and loss reasons.',
      resolve: (query, board, _args, ctx) => ctx.db.pipeline.findUniqueOrThrow({ ...query, where: { id: board.pipelineId } }),
    }),
    stages: t.field({
      type: [BoardStage],
      extensions: listCap(STAGES_MAX, 'stages.pipeline_id'),
      description: 'Columns in board order.',
      resolve: (b) => b.stages,
    }),
    total_deals: t.exposeInt('total_deals', { description: 'Deals matching the filters.' }),
    total_amount: t.exposeFloat('total_amount', { description: 'Σ of their totals.' }),
  }),
});

export interface PageInfoSource {
  current_page: number;
  total_pages: number;
  total_count: number;
  has_next: boolean;
  has_prev: boolean;
  next_cursor: string | null;
}

export const DealPagination = builder.objectRef<PageInfoSource>('DealPagination').implement({
  description: 'Page-number pagination of the deals list.',
  fields: (t) => ({
    current_page: t.exposeInt('current_page'),
    total_pages: t.exposeInt('total_pages', { description: '0 when nothing matches.' }),
    total_count: t.exposeInt('total_count', { description: 'Deals matching the filters.' }),
    has_next: t.exposeBoolean('has_next'),
    has_prev: t.exposeBoolean('has_prev'),
    next_cursor: t.exposeString('next_cursor', {
      nullable: true,
      description: 'Sync: the `cursor` of the next page; null on the last page and outside a sync.',
    }),
  }),
});

export const DealPage = builder.objectRef<{ data: DealRow[]; pagination: PageInfoSource }>('DealPage').implement({
  description: 'A page of deals.',
  fields: (t) => ({
    data: t.field({ type: [Deal], resolve: (p, _, ctx, info) => primeExtras(ctx, info, p.data) }),
    pagination: t.field({ type: DealPagination, resolve: (p) => p.pagination }),
  }),
});

export const Activity = builder.prismaObject('Activity', {
  description: 'A todo of a deal. Pending ones feed pending_todos and overdue_todos.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    deal_id: t.expose('deal_id', { type: 'UUID' }),
    title: t.exposeString('title'),
    due_at: t.expose('due_at', { type: 'DateTime', nullable: true }),
    done: t.exposeBoolean('done'),
    overdue: t.boolean({
      description: 'Not done and past its due date.',
      resolve: (a) => !a.done && !!a.due_at && a.due_at.getTime() < Date.now(),
    }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    updated_at: t.expose('updated_at', { type: 'DateTime' }),
  }),
});

export const DealEvent = builder.prismaObject('DealEvent', {
  description:
    'An entry of a deal’s timeline: `created`, `stage_changed`, `won`, `lost`, `value_changed`, `products_changed` or `updated`.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    deal_id: t.expose('deal_id', { type: 'UUID' }),
    type: t.exposeString('type'),
    from_stage_id: t.expose('from_stage_id', { type: 'UUID', nullable: true, description: 'Stage moves: where the deal was.' }),
    to_stage_id: t.expose('to_stage_id', { type: 'UUID', nullable: true, description: 'Created and stage moves: where the deal went.' }),
    data: t.field({
      type: 'JSONObject',
      description: 'Details: stage names, loss_reason, from/to values, line counts, changed fields.',
      resolve: (e) => (e.data ?? {}) as Record<string, unknown>,
    }),
    actor_id: t.expose('actor_id', { type: 'UUID', nullable: true, description: 'The user who made the change.' }),
    actor_name: t.string({
      nullable: true,
      description: 'That user’s name.',
      resolve: async (e, _, ctx) => (e.actor_id ? ((await userById(ctx).load(e.actor_id))?.name ?? null) : null),
    }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
  }),
});

export const DealChangeKindEnum = builder.enumType('DealChangeKind', {
  description:
    'What happened to a deal: `created`, `updated` (fields, lines or tags), `moved` (to another stage, or re-applied to its own) or `deleted`.',
  values: {
    created: { value: 'created' },
    updated: { value: 'updated' },
    moved: { value: 'moved' },
    deleted: { value: 'deleted' },
  } as const,
});

export const DealChange = builder.objectRef<DealChangeSource>('DealChange').implement({
  description: 'A committed change of a deal of the pipeline, with the deal as the change left it.',
  fields: (t) => ({
    kind: t.field({ type: DealChangeKindEnum, resolve: (c) => c.kind }),
    deal_id: t.field({ type: 'UUID', resolve: (c) => c.deal_id }),
    pipeline_id: t.field({ type: 'UUID', resolve: (c) => c.pipeline_id }),
    from_stage_id: t.field({ type: 'UUID', nullable: true, description: '`moved`: the stage it left.', resolve: (c) => c.from_stage_id }),
    to_stage_id: t.field({
      type: 'UUID',
      nullable: true,
      description: '`moved`: the stage it entered; `created`: its stage.',
      resolve: (c) => c.to_stage_id,
    }),
    deal: t.field({
      type: Deal,
      nullable: true,
      description: 'The deal after the change (its card fields come with the event); null when `deleted`.',
      resolve: (c) => c.deal,
    }),
  }),
});
