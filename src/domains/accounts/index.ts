// Organisations (platform operator), users and API keys (owner/admin with a full key), and who the caller is.
import { defineDomain } from '../manifest.js';
import { bootstrapAtStart } from './start.js';
import './fields.js';

export const accountsDomain = defineDomain({
  name: 'accounts',
  description: 'Organisations (platform operator), users, API keys, and who the caller is (`/backend/me`). Envelope style.',
  // First in the domains list, so the organisation exists before any other domain's hook runs.
  onStart: bootstrapAtStart,
  routes: [
    {
      method: 'POST',
      path: '/admin/tenants',
      field: 'Mutation.createTenant',
      style: 'envelope',
      wrap: 'none',
      status: 201,
      access: 'platform',
      summary: 'Create an organisation with its Owner and first API key',
    },
    { method: 'GET', path: '/users', field: 'Query.users', style: 'envelope', access: 'admin:full', summary: 'List users' },
    {
      method: 'POST',
      path: '/users',
      field: 'Mutation.createUser',
      style: 'envelope',
      status: 201,
      access: 'admin:full',
      summary: 'Create a user',
    },
    {
      method: 'PUT',
      path: '/users/:id',
      field: 'Mutation.updateUser',
      style: 'envelope',
      access: 'admin:full',
      summary: 'Change a user’s name, e-mail or role',
    },
    {
      method: 'DELETE',
      path: '/users/:id',
      field: 'Mutation.deleteUser',
      style: 'envelope',
      status: 204,
      access: 'admin:full',
      summary: 'Delete a user (revokes its keys)',
    },
    {
      method: 'GET',
      path: '/me',
      field: 'Query.viewer',
      style: 'envelope',
      access: 'member',
      summary: 'Who is calling: user, organisation and key',
    },
    {
      method: 'GET',
      path: '/api-keys',
      field: 'Query.apiKeys',
      style: 'envelope',
      access: 'admin:full',
      summary: 'List API keys (without secrets)',
    },
    {
      method: 'POST',
      path: '/api-keys',
      field: 'Mutation.createApiKey',
      style: 'envelope',
      status: 201,
      access: 'admin:full',
      summary: 'Create an API key',
    },
    {
      method: 'POST',
      path: '/api-keys/:id/revoke',
      field: 'Mutation.revokeApiKey',
      style: 'envelope',
      access: 'admin:full',
      summary: 'Revoke an API key',
    },
    {
      method: 'DELETE',
      path: '/api-keys/:id',
      field: 'Mutation.deleteApiKey',
      style: 'envelope',
      status: 204,
      access: 'admin:full',
      summary: 'Delete an API key',
    },
  ],
});
