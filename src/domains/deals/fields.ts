// Root queries and mutations of deals: thin, the rules live in service.ts, board.ts, activities.ts
// and history.ts.
import { syncArgs } from '../common/sync.js';
import { idArg } from '../common/args.js';
import { listCount } from '../../schema/list-bounds.js';
import { builder } from '../../schema/builder.js';
import { SUCCESS, Success } from '../common/types.js';
import * as activities from './activities.js';
import { dealPageJson, pipelineBoard, pipelineDeals } from './board.js';
import { jsonField } from '../../schema/json-fields.js';
import { boardJsonField } from './board-json.js';
import { dealHistory } from './history.js';
import * as deals from './service.js';
import { dealChangesFor, resolveDealChange } from './live.js';
import { Activity, Board, Deal, DealChange, DealDateMode, DealEvent, DealPage, DealSort } from './types.js';

export const DealProductInput = builder.inputType('DealProductInput', {
  description:
    'A product line. With product_id, name and price are copied from the catalog now; otherwise (or with custom) it is a one-off line.',
  fields: (t) => ({
    id: t.field({ type: 'UUID', description: 'On edits: an existing line of this deal, which keeps its copied name and price.' }),
    product_id: t.field({ type: 'UUID', description: 'A catalog product.' }),
    name: t.string({ description: 'Required for one-off lines.' }),
    price: t.float({ description: 'Unit price of a one-off line; not negative.' }),
    qty: t.int({ description: 'Quantity; below 1 counts as 1.' }),
    custom: t.boolean({ description: 'True for a one-off line that never enters the catalog.' }),
  }),
});

export const NewLeadInput = builder.inputType('DealNewLeadInput', {
  description: 'A lead created together with the deal.',
  fields: (t) => ({
    name: t.string({ required: true }),
    phone: t.string({ required: true, description: 'E.164 with country code.' }),
    email: t.string(),
    company: t.string(),
  }),
});

const filterArgs = builder.args((t) => ({
  search: t.string({ description: 'A deal number, or text matched in the lead’s name or company (case-insensitive).' }),
  stage_id: t.field({ type: 'UUID', description: 'Restricts to one stage of the pipeline.' }),
  sort: t.field({ type: DealSort, description: 'recent (default) or oldest, by creation.' }),
  mode: t.field({ type: DealDateMode, description: 'Date the period uses: created (default), won or lost.' }),
  period: t.string({ description: '7d, 30d, 1y or custom.' }),
  from: t.string({ description: 'With period=custom: start, ISO 8601, inclusive.' }),
  to: t.string({ description: 'With period=custom: end, ISO 8601, inclusive (a date alone means the whole day).' }),
}));

builder.queryField('pipelineBoard', (t) =>
  t.field({
    type: Board,
    description: 'A pipeline’s board: deal count and total per stage under the filters. No deals.',
    // The kanban (columns with their first deals and leads) is built as JSON by PostgreSQL in one
    // statement (board-json.ts); the resolvers answer the rest.
    extensions: jsonField(boardJsonField),
    args: { ...idArg('The pipeline.'), ...filterArgs },
    resolve: (_, { id, ...args }, ctx) => pipelineBoard(ctx, id, args),
  }),
);

builder.queryField('pipelineDeals', (t) =>
  t.field({
    type: DealPage,
    description:
      'A page of a pipeline’s deals under the board filters; with `updated_since` or `cursor`, a sync page: by updated_at, id ascending (`page` and `sort` are ignored).',
    // Most selections are built as JSON by PostgreSQL in one statement (sync pages too); the resolvers
    // answer the rest.
    extensions: jsonField(dealPageJson),
    args: {
      ...idArg('The pipeline.'),
      ...syncArgs,
      ...filterArgs,
      page: t.arg.int({ description: 'Default 1.' }),
      limit: t.arg.int({ description: '1 to 100; any other value means 20.' }),
    },
    resolve: (_, { id, ...args }, ctx) => pipelineDeals(ctx, id, args),
  }),
);

builder.queryField('deal', (t) =>
  t.field({
    type: Deal,
    args: idArg('The deal.'),
    description: 'One deal with its lines, tags and lead fields.',
    resolve: (_, args, ctx) => deals.getDeal(ctx, args.id),
  }),
);

builder.mutationField('createDeal', (t) =>
  t.field({
    type: Deal,
    description: 'Creates a deal in a stage of a pipeline, for an existing lead (lead_id) or a new one (new_lead).',
    args: {
      pipeline_id: t.arg({ type: 'UUID', required: true }),
      stage_id: t.arg({ type: 'UUID', required: true, description: 'A stage of the pipeline.' }),
      lead_id: t.arg({ type: 'UUID', description: 'An existing lead. Either this or new_lead.' }),
      new_lead: t.arg({ type: NewLeadInput, description: 'A lead to create with the deal.' }),
      owner_id: t.arg({ type: 'UUID', description: 'Responsible user.' }),
      loss_reason: t.arg.string({ description: 'Required when the stage is the lost stage.' }),
      lead_status_id: t.arg({ type: 'UUID', description: 'Status applied to the linked lead.' }),
      products: t.arg({ type: [DealProductInput], description: 'Product lines.' }),
      tag_ids: t.arg({ type: ['UUID'], description: 'Tags to associate.' }),
      origin: t.arg.string({ description: 'Default manual.' }),
      value: t.arg.float({ description: 'Manual value, not negative; the total when there are no lines.' }),
      note: t.arg.string({ description: 'Free text.' }),
    },
    resolve: (_, args, ctx) => deals.createDeal(ctx, args),
  }),
);

builder.mutationField('updateDeal', (t) =>
  t.field({
    type: Deal,
    description: 'Edits a deal; omitted fields are unchanged. products replaces the lines ([] removes all). The stage is not changed here.',
    args: {
      ...idArg('The deal.'),
      owner_id: t.arg({ type: 'UUID', description: 'Responsible user.' }),
      value: t.arg.float({ description: 'Not negative.' }),
      note: t.arg.string(),
      origin: t.arg.string(),
      products: t.arg({ type: [DealProductInput], description: 'Replaces the whole list.' }),
    },
    resolve: (_, { id, ...args }, ctx) => deals.updateDeal(ctx, id, args),
  }),
);

builder.mutationField('moveDeal', (t) =>
  t.field({
    type: Deal,
    description: 'Moves a deal to another stage of its pipeline: won/lost dates and the loss reason follow the destination.',
    args: {
      ...idArg('The deal.'),
      stage_id: t.arg({ type: 'UUID', required: true, description: 'Destination stage, in the same pipeline.' }),
      loss_reason: t.arg.string({ description: 'Required when the destination is the lost stage.' }),
    },
    resolve: (_, { id, ...args }, ctx) => deals.moveDeal(ctx, id, args),
  }),
);

builder.mutationField('deleteDeal', (t) =>
  t.field({
    type: Success,
    args: idArg('The deal.'),
    description: 'Deletes a deal with its lines, tags, activities and history. The lead is kept.',
    resolve: async (_, args, ctx) => (await deals.deleteDeal(ctx, args.id), SUCCESS),
  }),
);

const tagArgs = () =>
  builder.args((t) => ({ ...idArg('The deal.'), tag_id: t.field({ type: 'UUID', required: true, description: 'The tag.' }) }));

builder.mutationField('addDealTag', (t) =>
  t.field({
    type: Success,
    args: tagArgs(),
    description: 'Adds a tag to a deal (idempotent).',
    resolve: async (_, args, ctx) => (await deals.addDealTag(ctx, args.id, args.tag_id), SUCCESS),
  }),
);

builder.mutationField('removeDealTag', (t) =>
  t.field({
    type: Success,
    args: tagArgs(),
    description: 'Removes a tag from a deal.',
    resolve: async (_, args, ctx) => (await deals.removeDealTag(ctx, args.id, args.tag_id), SUCCESS),
  }),
);

builder.queryField('dealActivities', (t) =>
  t.prismaField({
    type: [Activity],
    extensions: listCount('activities', (args) => ({ deal_id: args.id })),

    args: idArg('The deal.'),
    description: 'A deal’s todos: pending first, by due date.',
    resolve: (query, _, args, ctx) => activities.listActivities(ctx, args.id, query),
  }),
);

builder.mutationField('createDealActivity', (t) =>
  t.prismaField({
    type: Activity,
    description: 'Adds a todo to a deal.',
    args: {
      ...idArg('The deal.'),
      title: t.arg.string({ required: true }),
      due_at: t.arg({ type: 'DateTime', description: 'When it is due.' }),
      done: t.arg.boolean({ description: 'Default false.' }),
    },
    resolve: (query, _, { id, ...args }, ctx) => activities.createActivity(ctx, id, args, query),
  }),
);

builder.mutationField('updateActivity', (t) =>
  t.prismaField({
    type: Activity,
    description: 'Edits a todo; omitted fields are unchanged.',
    args: { ...idArg('The activity.'), title: t.arg.string(), due_at: t.arg({ type: 'DateTime' }), done: t.arg.boolean() },
    resolve: (query, _, { id, ...args }, ctx) => activities.updateActivity(ctx, id, args, query),
  }),
);

builder.mutationField('deleteActivity', (t) =>
  t.field({
    type: Success,
    args: idArg('The activity.'),
    description: 'Deletes a todo.',
    resolve: async (_, args, ctx) => (await activities.deleteActivity(ctx, args.id), SUCCESS),
  }),
);

builder.queryField('dealHistory', (t) =>
  t.prismaField({
    type: [DealEvent],
    extensions: listCount('deal_events', (args) => ({ deal_id: args.id })),

    args: idArg('The deal.'),
    description: 'A deal’s timeline, oldest first: creation, stage moves, won/lost, value and product changes, with actor and time.',
    resolve: (query, _, args, ctx) => dealHistory(ctx, args.id, query),
  }),
);

// ---- Live deals ----

builder.subscriptionField('dealChanged', (t) =>
  t.field({
    type: DealChange,
    description:
      'Each deal created, edited, moved or deleted in the pipeline, once its change commits: a kanban stays live. An unknown pipeline (or another organisation’s) is NOT_FOUND.',
    args: { pipeline_id: t.arg({ type: 'UUID', required: true, description: 'The pipeline.' }) },
    subscribe: (_, args, ctx) => dealChangesFor(ctx, args.pipeline_id),
    resolve: (change, _, ctx) => resolveDealChange(ctx, change),
  }),
);
