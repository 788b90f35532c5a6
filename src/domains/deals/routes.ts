import { route } from '../../rest/route-table.js';

export const dealRoutes = [
  route({ method: 'GET', path: '/pipelines/:id/board', field: 'Query.pipelineBoard', style: 'bare' }),
  route({ method: 'GET', path: '/pipelines/:id/deals', field: 'Query.pipelineDeals', style: 'bare' }),
  route({ method: 'POST', path: '/pipeline/deals', field: 'Mutation.createDeal', style: 'bare', status: 201 }),
  route({ method: 'GET', path: '/pipeline/deals/:id', field: 'Query.deal', style: 'bare' }),
  route({ method: 'PUT', path: '/pipeline/deals/:id', field: 'Mutation.updateDeal', style: 'bare' }),
  route({ method: 'DELETE', path: '/pipeline/deals/:id', field: 'Mutation.deleteDeal', style: 'bare' }),
  route({ method: 'PUT', path: '/pipeline/deals/:id/stage', field: 'Mutation.moveDeal', style: 'bare' }),
  route({ method: 'POST', path: '/pipeline/deals/:id/tags/:tag_id', field: 'Mutation.addDealTag', style: 'bare' }),
  route({ method: 'DELETE', path: '/pipeline/deals/:id/tags/:tag_id', field: 'Mutation.removeDealTag', style: 'bare' }),
  route({ method: 'GET', path: '/pipeline/deals/:id/activities', field: 'Query.dealActivities', style: 'bare' }),
  route({ method: 'POST', path: '/pipeline/deals/:id/activities', field: 'Mutation.createDealActivity', style: 'bare', status: 201 }),
  route({ method: 'PUT', path: '/pipeline/activities/:id', field: 'Mutation.updateActivity', style: 'bare' }),
  route({ method: 'DELETE', path: '/pipeline/activities/:id', field: 'Mutation.deleteActivity', style: 'bare' }),
  route({ method: 'GET', path: '/pipeline/deals/:id/history', field: 'Query.dealHistory', style: 'bare' }),
];
