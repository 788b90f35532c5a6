import { route } from '../../rest/route-table.js';

export const leadRoutes = [
  route({ method: 'GET', path: '/leads', field: 'Query.leads', style: 'envelope', wrap: 'spread' }),
  route({ method: 'POST', path: '/leads', field: 'Mutation.createLead', style: 'envelope' }),
  route({ method: 'GET', path: '/leads/:id', field: 'Query.lead', style: 'envelope' }),
  route({ method: 'PUT', path: '/leads/:id', field: 'Mutation.updateLead', style: 'envelope' }),
  route({ method: 'DELETE', path: '/leads/:id', field: 'Mutation.deleteLead', style: 'envelope', wrap: 'none' }),
  route({ method: 'GET', path: '/lead-statuses', field: 'Query.leadStatuses', style: 'envelope' }),
  route({ method: 'POST', path: '/lead-statuses', field: 'Mutation.createLeadStatus', style: 'envelope', status: 201 }),
  route({ method: 'GET', path: '/tags', field: 'Query.tags', style: 'envelope' }),
  route({ method: 'POST', path: '/tags', field: 'Mutation.createTag', style: 'envelope', status: 201 }),
  route({ method: 'PUT', path: '/tags/:id', field: 'Mutation.updateTag', style: 'envelope' }),
  route({ method: 'DELETE', path: '/tags/:id', field: 'Mutation.deleteTag', style: 'envelope', wrap: 'none' }),
];
