// Deals: board, list, create/edit/move, tags, activities and history (bare style).
import { defineDomain } from '../manifest.js';
import { DEAL_EVENT_TYPES } from './event-types.js';
import './fields.js';

export const dealsDomain = defineDomain({
  name: 'deals',
  description: 'Deals: the board, lists, create, edit and move between stages, tags, activities and history. Bare style.',
  events: DEAL_EVENT_TYPES,
  permissions: [
    { name: 'pipeline.deals.create', roles: ['owner', 'admin', 'operator'], description: 'Create deals.' },
    { name: 'pipeline.deals.edit', roles: ['owner', 'admin', 'operator'], description: 'Edit and move deals, their tags and activities.' },
    { name: 'pipeline.deals.delete', roles: ['owner', 'admin'], description: 'Delete deals.' },
  ],
  fields: { 'Subscription.dealChanged': 'pipeline.view' },
  routes: [
    { method: 'GET', path: '/pipelines/:id/board', field: 'Query.pipelineBoard', style: 'bare', access: 'pipeline.view', summary: 'Board summary per stage' },
    { method: 'GET', path: '/pipelines/:id/deals', field: 'Query.pipelineDeals', style: 'bare', access: 'pipeline.view', summary: 'Paginated list of deals' },
    { method: 'POST', path: '/pipeline/deals', field: 'Mutation.createDeal', style: 'bare', status: 201, access: 'pipeline.deals.create', summary: 'Create a deal' },
    { method: 'GET', path: '/pipeline/deals/:id', field: 'Query.deal', style: 'bare', access: 'pipeline.view', summary: 'Get a deal' },
    { method: 'PUT', path: '/pipeline/deals/:id', field: 'Mutation.updateDeal', style: 'bare', access: 'pipeline.deals.edit', summary: 'Edit a deal' },
    { method: 'DELETE', path: '/pipeline/deals/:id', field: 'Mutation.deleteDeal', style: 'bare', access: 'pipeline.deals.delete', summary: 'Delete a deal' },
    { method: 'PUT', path: '/pipeline/deals/:id/stage', field: 'Mutation.moveDeal', style: 'bare', access: 'pipeline.deals.edit', summary: 'Move a deal to a stage' },
    { method: 'POST', path: '/pipeline/deals/:id/tags/:tag_id', field: 'Mutation.addDealTag', style: 'bare', access: 'pipeline.deals.edit', summary: 'Tag a deal' },
    { method: 'DELETE', path: '/pipeline/deals/:id/tags/:tag_id', field: 'Mutation.removeDealTag', style: 'bare', access: 'pipeline.deals.edit', summary: 'Untag a deal' },
    { method: 'GET', path: '/pipeline/deals/:id/activities', field: 'Query.dealActivities', style: 'bare', access: 'pipeline.view', summary: 'List a deal’s activities' },
    { method: 'POST', path: '/pipeline/deals/:id/activities', field: 'Mutation.createDealActivity', style: 'bare', status: 201, access: 'pipeline.deals.edit', summary: 'Add an activity' },
    { method: 'PUT', path: '/pipeline/activities/:id', field: 'Mutation.updateActivity', style: 'bare', access: 'pipeline.deals.edit', summary: 'Update an activity' },
    { method: 'DELETE', path: '/pipeline/activities/:id', field: 'Mutation.deleteActivity', style: 'bare', access: 'pipeline.deals.edit', summary: 'Delete an activity' },
    { method: 'GET', path: '/pipeline/deals/:id/history', field: 'Query.dealHistory', style: 'bare', access: 'pipeline.view', summary: 'A deal’s timeline' },
  ],
});
