// GraphQL types of the pipeline configuration: groups, pipelines and stages (board columns).
import { builder, GRAPH_ONLY } from '../../schema/builder.js';
import { firstOfCapArg, listCap, listCount, takeOfFirst } from '../../schema/list-bounds.js';
import { STAGES_MAX } from './validate.js';

export const StageKindEnum = builder.enumType('StageKind', {
  description: 'The outcome a stage stands for. Regular stages have no kind.',
  values: { won: { value: 'won' }, lost: { value: 'lost' } } as const,
});

export const Stage = builder.prismaObject('Stage', {
  description: 'A board column of a pipeline.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    pipeline_id: t.expose('pipeline_id', { type: 'UUID' }),
    name: t.exposeString('name', { description: 'Column title.' }),
    color: t.exposeString('color', { description: 'HSL triple "H S% L%" without the hsl() wrapper.' }),
    kind: t.expose('kind', { type: StageKindEnum, nullable: true, description: '`won`, `lost`, or null for a regular stage.' }),
    position: t.exposeInt('position', { description: '0-based column order.' }),
    pipeline: t.relation('pipeline', { extensions: GRAPH_ONLY, description: 'The pipeline this stage belongs to.' }),
  }),
});

export const Pipeline = builder.prismaObject('Pipeline', {
  description: 'A sales pipeline: ordered stages, loss reasons and the deals moving through them.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    group_id: t.expose('group_id', { type: 'UUID' }),
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    position: t.exposeInt('position', { description: 'Order inside the group.' }),
    stages: t.relation('stages', {
      args: firstOfCapArg(STAGES_MAX),
      extensions: listCap(STAGES_MAX, 'stages.pipeline_id'),
      query: (args) => ({ orderBy: { position: 'asc' }, take: takeOfFirst(args.first, STAGES_MAX) }),
      description: `Stages in board order (at most ${STAGES_MAX}).`,
    }),
    loss_reasons: t.exposeStringList('loss_reasons', { description: 'Reasons offered when a deal is lost.' }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    group: t.relation('group', { extensions: GRAPH_ONLY, description: 'The group holding this pipeline.' }),
  }),
});

export const PipelineGroup = builder.prismaObject('PipelineGroup', {
  description: 'A named, ordered set of pipelines.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    name: t.exposeString('name'),
    position: t.exposeInt('position', { description: 'Groups are ordered by it.' }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    pipelines: t.relatedConnection('pipelines', {
      cursor: 'id',
      query: { orderBy: [{ position: 'asc' }, { id: 'asc' }] },
      extensions: GRAPH_ONLY,
      maxSize: 100,
      defaultSize: 20,
      totalCount: true,
      description: 'Pipelines of the group, ordered by position (at most 100 per page).',
    }),
  }),
});

/** A stage of the transactional save (`PUT /backend/pipelines/{id}`): its place in the array is its position. */
export const ConfigStageInput = builder.inputType('ConfigStage', {
  description:
    'A stage in a pipeline save. With `id` it updates that stage; without, it creates a regular stage. The array order is the board order.',
  fields: (t) => ({
    id: t.field({ type: 'UUID', description: 'An existing stage of this pipeline; omit to create a stage.' }),
    name: t.string({ required: true, description: 'Column title.' }),
    color: t.string({
      description: 'HSL triple "H S% L%". New stages default to `215 16% 47%`; omitted on an existing stage keeps its color.',
    }),
    kind: t.field({
      type: StageKindEnum,
      description: 'Ignored for existing stages (their kind never changes). A new stage can only be regular: won or lost is refused.',
    }),
    position: t.int({
      description: 'Ignored: the order of the array defines positions. Accepted so stages read from the API can be sent back.',
    }),
    pipeline_id: t.field({ type: 'UUID', description: 'Ignored. Accepted so stages read from the API can be sent back.' }),
  }),
});

/** `GET /backend/pipelines` and the reorder answer: groups and pipelines, each ordered by position. */
export const PipelineListing = builder.objectRef<Record<string, never>>('PipelineListing').implement({
  description: 'All groups and all pipelines of the organisation, each ordered by position (pipelines by group position, then position).',
  fields: (t) => ({
    groups: t.prismaField({
      type: [PipelineGroup],
      extensions: listCount('pipeline_groups'),
      description: 'Groups ordered by position.',
      resolve: (query, _root, _args, ctx) =>
        ctx.db.pipelineGroup.findMany({ ...query, orderBy: [{ position: 'asc' }, { created_at: 'asc' }, { id: 'asc' }] }),
    }),
    pipelines: t.prismaField({
      type: [Pipeline],
      extensions: listCount('pipelines'),
      description: 'Pipelines ordered by their group’s position, then by their position in the group. Each carries `group_id`.',
      resolve: (query, _root, _args, ctx) =>
        ctx.db.pipeline.findMany({
          ...query,
          orderBy: [{ group: { position: 'asc' } }, { group_id: 'asc' }, { position: 'asc' }, { created_at: 'asc' }, { id: 'asc' }],
        }),
    }),
  }),
});
