// GraphQL types of the pipeline configuration: groups, pipelines and stages (board columns).
import { builder, GRAPH_ONLY } from '../../schema/builder.js';

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
    stages: t.relation('stages', { query: { orderBy: { position: 'asc' } }, description: 'Stages in board order.' }),
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
    pipelines: t.relation('pipelines', { query: { orderBy: { position: 'asc' } }, extensions: GRAPH_ONLY, description: 'Pipelines of the group, ordered by position.' }),
  }),
});
