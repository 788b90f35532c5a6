// Templates synchronised from the provider, cadences and cadence associations (bare style). Operators
// read and preview; owner/admin write (decisions.md "Roles and permissions").
import { defineDomain } from '../manifest.js';
import './fields.js';

export const templatesDomain = defineDomain({
  name: 'templates',
  routes: [
    { method: 'GET', path: '/templates', field: 'Query.templates', style: 'bare', access: 'member', summary: 'List templates' },
    { method: 'POST', path: '/templates/sync', field: 'Mutation.syncTemplates', style: 'bare', access: 'admin', summary: 'Create and update templates from the provider' },
    { method: 'GET', path: '/templates/cadence-associations', field: 'Query.cadenceAssociations', style: 'bare', access: 'member', summary: 'List cadence associations' },
    { method: 'POST', path: '/templates/cadence-associations', field: 'Mutation.createCadenceAssociation', style: 'bare', status: 201, access: 'admin', summary: 'Associate a template with a cadence step' },
    { method: 'PUT', path: '/templates/cadence-associations/:id/params', field: 'Mutation.updateCadenceAssociationParams', style: 'bare', access: 'admin', summary: 'Replace an association’s parameter mapping' },
    { method: 'DELETE', path: '/templates/cadence-associations/:id', field: 'Mutation.deleteCadenceAssociation', style: 'bare', status: 204, access: 'admin', summary: 'Delete a cadence association' },
    { method: 'POST', path: '/templates/cadence-associations/:id/preview', field: 'Query.previewCadenceAssociation', style: 'bare', access: 'member', summary: 'Preview an association’s message for a lead' },
    { method: 'GET', path: '/templates/:id', field: 'Query.template', style: 'bare', access: 'member', summary: 'Get a template with all its components' },
    { method: 'DELETE', path: '/templates/:id', field: 'Mutation.deleteTemplate', style: 'bare', status: 204, access: 'admin', summary: 'Delete a template and its cadence associations' },
    { method: 'GET', path: '/cadences', field: 'Query.cadences', style: 'bare', access: 'member', summary: 'List cadences' },
    { method: 'POST', path: '/cadences', field: 'Mutation.createCadence', style: 'bare', status: 201, access: 'admin', summary: 'Create a cadence' },
  ],
});
