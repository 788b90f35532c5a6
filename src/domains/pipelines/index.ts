// Pipeline groups, pipelines and stages (bare style).
import { defineDomain } from '../manifest.js';
import './fields.js';

export const pipelinesDomain = defineDomain({
  name: 'pipelines',
  description: 'Pipeline groups, pipelines and their stages. Bare style.',
  permissions: [
    { name: 'pipeline.view', roles: ['owner', 'admin', 'operator'], description: 'Read pipelines, boards, deals and products.' },
    { name: 'pipeline.manage', roles: ['owner', 'admin'], description: 'Create and change groups, pipelines and stages.' },
  ],
  routes: [
    { method: 'GET', path: '/pipelines', field: 'Query.pipelines', style: 'bare', access: 'pipeline.view', summary: 'List groups and pipelines' },
    { method: 'POST', path: '/pipelines', field: 'Mutation.createPipeline', style: 'bare', status: 201, access: 'pipeline.manage', summary: 'Create a pipeline' },
    { method: 'PUT', path: '/pipelines/reorder', field: 'Mutation.reorderPipelines', style: 'bare', access: 'pipeline.manage', summary: 'Move a pipeline within or across groups' },
    { method: 'GET', path: '/pipelines/:id', field: 'Query.pipeline', style: 'bare', access: 'pipeline.view', summary: 'Get a pipeline' },
    { method: 'PUT', path: '/pipelines/:id', field: 'Mutation.updatePipeline', style: 'bare', access: 'pipeline.manage', summary: 'Save a pipeline with its stages (transactional)' },
    { method: 'DELETE', path: '/pipelines/:id', field: 'Mutation.deletePipeline', style: 'bare', access: 'pipeline.manage', summary: 'Delete a pipeline and everything in it' },
    { method: 'POST', path: '/pipelines/:pipeline_id/stages', field: 'Mutation.createStage', style: 'bare', status: 201, access: 'pipeline.manage', summary: 'Add a stage' },
    { method: 'PUT', path: '/pipeline/stages/:id', field: 'Mutation.updateStage', style: 'bare', access: 'pipeline.manage', summary: 'Rename, recolour or move a stage' },
    { method: 'DELETE', path: '/pipeline/stages/:id', field: 'Mutation.deleteStage', style: 'bare', access: 'pipeline.manage', query: ['target_stage_id'], summary: 'Delete a stage' },
    { method: 'GET', path: '/pipeline/groups', field: 'Query.pipelineGroups', style: 'bare', access: 'pipeline.view', summary: 'List groups' },
    { method: 'POST', path: '/pipeline/groups', field: 'Mutation.createPipelineGroup', style: 'bare', status: 201, access: 'pipeline.manage', summary: 'Create a group' },
    { method: 'PUT', path: '/pipeline/groups/:id', field: 'Mutation.updatePipelineGroup', style: 'bare', access: 'pipeline.manage', summary: 'Rename a group' },
    { method: 'DELETE', path: '/pipeline/groups/:id', field: 'Mutation.deletePipelineGroup', style: 'bare', access: 'pipeline.manage', summary: 'Delete an empty group' },
  ],
});
