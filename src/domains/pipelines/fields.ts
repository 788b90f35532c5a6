// Root fields of the pipeline configuration: groups, pipelines, the transactional save, reorder, stages.
import { idArg } from '../common/args.js';
import { listCount } from '../../schema/list-bounds.js';
import { builder } from '../../schema/builder.js';
import { SUCCESS, Success } from '../common/types.js';
import '../products/fields.js';
import { ConfigStageInput, Pipeline, PipelineGroup, PipelineListing, Stage, StageKindEnum } from './types.js';
import * as groups from './groups.js';
import * as pipelines from './pipelines.js';
import { savePipeline } from './save.js';
import * as stages from './stages.js';

// Groups

builder.queryField('pipelineGroups', (t) =>
  t.prismaField({
    type: [PipelineGroup],
    extensions: listCount('pipeline_groups'),
    description:
      'Pipeline groups ordered by position (pipeline.view). Select `pipelines { nodes { stages } }` to load a whole board configuration at once.',
    resolve: (query, _root, _args, ctx) => groups.listGroups(ctx, query),
  }),
);

builder.mutationField('createPipelineGroup', (t) =>
  t.prismaField({
    type: PipelineGroup,
    description: 'Adds a group after the last one (pipeline.manage).',
    args: { name: t.arg.string({ required: true, description: 'Group name.' }) },
    resolve: (query, _root, args, ctx) => groups.createGroup(ctx, args, query),
  }),
);

builder.mutationField('updatePipelineGroup', (t) =>
  t.prismaField({
    type: PipelineGroup,
    description: 'Renames a group, and optionally moves it to `position` (the other groups shift) (pipeline.manage).',
    args: {
      ...idArg('The group.'),
      name: t.arg.string({ required: true, description: 'Group name.' }),
      position: t.arg.int({ description: 'New 0-based position among the groups.' }),
    },
    resolve: (query, _root, args, ctx) => groups.updateGroup(ctx, args.id, args, query),
  }),
);

builder.mutationField('deletePipelineGroup', (t) =>
  t.field({
    type: Success,
    description: 'Deletes an empty group (pipeline.manage). A group that still holds pipelines is a conflict (409, with pipeline_count).',
    args: idArg('The group.'),
    resolve: async (_root, args, ctx) => (await groups.deleteGroup(ctx, args.id), SUCCESS),
  }),
);

// Pipelines

builder.queryField('pipelines', (t) =>
  t.field({
    type: PipelineListing,
    description: 'All groups and pipelines, each ordered by position (pipeline.view).',
    resolve: (_root, _args, ctx) => pipelines.pipelineListing(ctx),
  }),
);

builder.queryField('pipeline', (t) =>
  t.prismaField({
    type: Pipeline,
    description: 'One pipeline with its stages and loss reasons (pipeline.view).',
    args: idArg('The pipeline.'),
    resolve: (query, _root, args, ctx) => pipelines.getPipeline(ctx, args.id, query),
  }),
);

builder.mutationField('createPipeline', (t) =>
  t.prismaField({
    type: Pipeline,
    description:
      'Creates a pipeline at the end of its group, with the default stages (Entrada, Em andamento, Ganho, Perdido) and loss reasons (pipeline.manage). Give `group_id` or `new_group_name`.',
    args: {
      name: t.arg.string({ required: true, description: 'Pipeline name.' }),
      description: t.arg.string({ description: 'Free text.' }),
      group_id: t.arg({ type: 'UUID', description: 'An existing group.' }),
      new_group_name: t.arg.string({ description: 'Creates a group with this name, in the same transaction.' }),
    },
    resolve: (query, _root, args, ctx) => pipelines.createPipeline(ctx, args, query),
  }),
);

builder.mutationField('updatePipeline', (t) =>
  t.prismaField({
    type: Pipeline,
    description:
      'Transactional save of a pipeline and its whole stage list (pipeline.manage): array order is board order, entries without id create stages, stages left out are deleted and their deals move to `reallocation_targets`. All or nothing.',
    args: {
      ...idArg('The pipeline.'),
      name: t.arg.string({ required: true, description: 'Pipeline name.' }),
      description: t.arg.string({ description: 'Free text; omitted keeps it.' }),
      stages: t.arg({ type: [ConfigStageInput], required: true, description: 'Every stage of the pipeline, in board order.' }),
      loss_reasons: t.arg.stringList({ description: 'Replaces the loss reasons; omitted keeps them.' }),
      reallocation_targets: t.arg({
        type: 'JSONObject',
        description: 'Maps a removed stage id to the id of a stage that remains; required for each removed stage that has deals.',
      }),
    },
    resolve: (query, _root, args, ctx) => savePipeline(ctx, args.id, args, query),
  }),
);

builder.mutationField('reorderPipelines', (t) =>
  t.field({
    type: PipelineListing,
    description: 'Moves a pipeline into a group, before another pipeline or last (pipeline.manage). Answers with all groups and pipelines.',
    args: {
      pipeline_id: t.arg({ type: 'UUID', required: true, description: 'The pipeline to move.' }),
      group_id: t.arg({ type: 'UUID', required: true, description: 'The destination group.' }),
      before_pipeline_id: t.arg({
        type: 'UUID',
        description: 'The pipeline of the destination group that should follow the moved one; omitted places it last.',
      }),
    },
    resolve: (_root, args, ctx) => pipelines.reorderPipelines(ctx, args),
  }),
);

builder.mutationField('deletePipeline', (t) =>
  t.field({
    type: Success,
    description:
      'Deletes a pipeline with its stages and deals, and the deals’ lines, tags, activities and history (pipeline.manage). Irreversible.',
    args: idArg('The pipeline.'),
    resolve: async (_root, args, ctx) => (await pipelines.deletePipeline(ctx, args.id), SUCCESS),
  }),
);

// Stages

builder.mutationField('createStage', (t) =>
  t.prismaField({
    type: Stage,
    description: 'Adds a regular stage at the end of a pipeline (pipeline.manage). Won and lost stages cannot be created.',
    args: {
      pipeline_id: t.arg({ type: 'UUID', required: true, description: 'The pipeline.' }),
      name: t.arg.string({ required: true, description: 'Column title.' }),
      color: t.arg.string({ description: 'HSL triple "H S% L%"; default `215 16% 47%`.' }),
      kind: t.arg({ type: StageKindEnum, description: 'Must be omitted: won or lost is refused (400).' }),
    },
    resolve: (query, _root, args, ctx) => stages.createStage(ctx, args.pipeline_id, args, query),
  }),
);

builder.mutationField('updateStage', (t) =>
  t.prismaField({
    type: Stage,
    description: 'Renames, recolors or moves a stage; the other stages shift (pipeline.manage). A stage’s kind never changes.',
    args: {
      ...idArg('The stage.'),
      name: t.arg.string({ description: 'Column title.' }),
      color: t.arg.string({ description: 'HSL triple "H S% L%".' }),
      position: t.arg.int({ description: 'New 0-based position in the pipeline.' }),
    },
    resolve: (query, _root, args, ctx) => stages.updateStage(ctx, args.id, args, query),
  }),
);

builder.mutationField('deleteStage', (t) =>
  t.field({
    type: Success,
    description:
      'Deletes a regular stage (pipeline.manage). Its deals move to `target_stage_id`, which is required when it has deals (409 otherwise). Won and lost stages, and the last stage, cannot be deleted.',
    args: {
      ...idArg('The stage.'),
      target_stage_id: t.arg({ type: 'UUID', description: 'A stage of the same pipeline that receives the deals.' }),
    },
    resolve: async (_root, args, ctx) => (await stages.deleteStage(ctx, args.id, args.target_stage_id), SUCCESS),
  }),
);
