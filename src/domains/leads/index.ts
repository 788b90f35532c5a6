// Leads, lead statuses and tags (envelope style).
import { defineDomain } from '../manifest.js';
import './fields.js';

export const leadsDomain = defineDomain({
  name: 'leads',
  routes: [
    { method: 'GET', path: '/leads', field: 'Query.leads', style: 'envelope', wrap: 'spread', access: 'member', summary: 'List leads' },
    { method: 'POST', path: '/leads', field: 'Mutation.createLead', style: 'envelope', access: 'member', summary: 'Create a lead' },
    { method: 'GET', path: '/leads/:id', field: 'Query.lead', style: 'envelope', access: 'member', summary: 'Get a lead' },
    { method: 'PUT', path: '/leads/:id', field: 'Mutation.updateLead', style: 'envelope', access: 'member', summary: 'Update a lead' },
    { method: 'DELETE', path: '/leads/:id', field: 'Mutation.deleteLead', style: 'envelope', wrap: 'none', access: 'member', summary: 'Delete a lead' },
    { method: 'GET', path: '/lead-statuses', field: 'Query.leadStatuses', style: 'envelope', access: 'member', summary: 'List lead statuses' },
    { method: 'POST', path: '/lead-statuses', field: 'Mutation.createLeadStatus', style: 'envelope', status: 201, access: 'member', summary: 'Create a lead status' },
    { method: 'GET', path: '/tags', field: 'Query.tags', style: 'envelope', access: 'member', summary: 'List tags' },
    { method: 'POST', path: '/tags', field: 'Mutation.createTag', style: 'envelope', status: 201, access: 'member', summary: 'Create a tag' },
    { method: 'PUT', path: '/tags/:id', field: 'Mutation.updateTag', style: 'envelope', access: 'member', summary: 'Update a tag' },
    { method: 'DELETE', path: '/tags/:id', field: 'Mutation.deleteTag', style: 'envelope', wrap: 'none', access: 'member', summary: 'Delete a tag' },
  ],
});
