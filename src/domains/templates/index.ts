// Templates synchronised from the provider, cadences and cadence associations (bare style). Operators
// read and preview (templates.view); owner/admin write (templates.manage).
import { defineDomain } from '../manifest.js';
import './fields.js';

export const templatesDomain = defineDomain({
  name: 'templates',
  description: 'Message templates synchronised from the provider, cadences and cadence associations. Bare style.',
  permissions: [
    {
      name: 'templates.view',
      roles: ['owner', 'admin', 'operator'],
      description: 'Read templates, cadences and cadence associations, and preview an association for a lead.',
    },
    {
      name: 'templates.manage',
      roles: ['owner', 'admin'],
      description: 'Sync and delete templates; create, change and delete cadence associations.',
    },
  ],
  routes: [
    { method: 'GET', path: '/templates', field: 'Query.templates', style: 'bare', access: 'templates.view', summary: 'List templates' },
    {
      method: 'POST',
      path: '/templates/sync',
      field: 'Mutation.syncTemplates',
      style: 'bare',
      access: 'templates.manage',
      summary: 'Create and update templates from the provider',
    },
    {
      method: 'GET',
      path: '/templates/cadence-associations',
      field: 'Query.cadenceAssociations',
      style: 'bare',
      access: 'templates.view',
      summary: 'List cadence associations',
    },
    {
      method: 'POST',
      path: '/templates/cadence-associations',
      field: 'Mutation.createCadenceAssociation',
      style: 'bare',
      status: 201,
      access: 'templates.manage',
      summary: 'Associate a template with a cadence step',
    },
    {
      method: 'PUT',
      path: '/templates/cadence-associations/:id/params',
      field: 'Mutation.updateCadenceAssociationParams',
      style: 'bare',
      access: 'templates.manage',
      summary: 'Replace an association’s parameter mapping',
    },
    {
      method: 'DELETE',
      path: '/templates/cadence-associations/:id',
      field: 'Mutation.deleteCadenceAssociation',
      style: 'bare',
      status: 204,
      access: 'templates.manage',
      summary: 'Delete a cadence association',
    },
    {
      method: 'POST',
      path: '/templates/cadence-associations/:id/preview',
      field: 'Query.previewCadenceAssociation',
      style: 'bare',
      access: 'templates.view',
      summary: 'Preview an association’s message for a lead',
    },
    {
      method: 'GET',
      path: '/templates/:id',
      field: 'Query.template',
      style: 'bare',
      access: 'templates.view',
      summary: 'Get a template with all its components',
    },
    {
      method: 'DELETE',
      path: '/templates/:id',
      field: 'Mutation.deleteTemplate',
      style: 'bare',
      status: 204,
      access: 'templates.manage',
      summary: 'Delete a template and its cadence associations',
    },
  ],
});
