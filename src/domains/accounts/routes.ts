import { route } from '../../rest/route-table.js';

export const accountRoutes = [
  route({ method: 'POST', path: '/admin/tenants', field: 'Mutation.createTenant', style: 'envelope', wrap: 'none', status: 201, admin: true }),
  route({ method: 'GET', path: '/users', field: 'Query.users', style: 'envelope' }),
  route({ method: 'POST', path: '/users', field: 'Mutation.createUser', style: 'envelope', status: 201 }),
  route({ method: 'GET', path: '/api-keys', field: 'Query.apiKeys', style: 'envelope' }),
  route({ method: 'POST', path: '/api-keys', field: 'Mutation.createApiKey', style: 'envelope', status: 201 }),
  route({ method: 'POST', path: '/api-keys/:id/revoke', field: 'Mutation.revokeApiKey', style: 'envelope' }),
  route({ method: 'DELETE', path: '/api-keys/:id', field: 'Mutation.deleteApiKey', style: 'envelope', status: 204 }),
];
