import { route } from '../../rest/route-table.js';

export const pipelineRoutes = [
  route({ method: 'GET', path: '/pipelines', field: 'Query.pipelines', style: 'bare' }),
  route({ method: 'POST', path: '/pipelines', field: 'Mutation.createPipeline', style: 'bare', status: 201 }),
  route({ method: 'PUT', path: '/pipelines/reorder', field: 'Mutation.reorderPipelines', style: 'bare' }),
  route({ method: 'GET', path: '/pipelines/:id', field: 'Query.pipeline', style: 'bare' }),
  route({ method: 'PUT', path: '/pipelines/:id', field: 'Mutation.updatePipeline', style: 'bare' }),
  route({ method: 'DELETE', path: '/pipelines/:id', field: 'Mutation.deletePipeline', style: 'bare' }),
  route({ method: 'POST', path: '/pipelines/:pipeline_id/stages', field: 'Mutation.createStage', style: 'bare', status: 201 }),
  route({ method: 'PUT', path: '/pipeline/stages/:id', field: 'Mutation.updateStage', style: 'bare' }),
  route({ method: 'DELETE', path: '/pipeline/stages/:id', field: 'Mutation.deleteStage', style: 'bare' }),
  route({ method: 'GET', path: '/pipeline/groups', field: 'Query.pipelineGroups', style: 'bare' }),
  route({ method: 'POST', path: '/pipeline/groups', field: 'Mutation.createPipelineGroup', style: 'bare', status: 201 }),
  route({ method: 'PUT', path: '/pipeline/groups/:id', field: 'Mutation.updatePipelineGroup', style: 'bare' }),
  route({ method: 'DELETE', path: '/pipeline/groups/:id', field: 'Mutation.deletePipelineGroup', style: 'bare' }),
];
