// Leads, lead statuses and tags (envelope style).
import { defineDomain } from '../manifest.js';
import { LEAD_EVENT_TYPES } from './event-types.js';
import './fields.js';

export const leadsDomain = defineDomain({
  name: 'leads',
  description: 'Leads, lead statuses and tags. Envelope style.',
  events: LEAD_EVENT_TYPES,
  permissions: [
    { name: 'leads.view', roles: ['owner', 'admin', 'operator'], description: 'Read leads, lead statuses and tags.' },
    {
      name: 'leads.manage',
      roles: ['owner', 'admin', 'operator'],
      description: 'Create, change and delete leads, lead statuses and tags.',
    },
  ],
  routes: [
    { method: 'GET', path: '/leads', field: 'Query.leads', style: 'envelope', wrap: 'spread', access: 'leads.view', summary: 'List leads' },
    { method: 'POST', path: '/leads', field: 'Mutation.createLead', style: 'envelope', access: 'leads.manage', summary: 'Create a lead' },
    { method: 'GET', path: '/leads/:id', field: 'Query.lead', style: 'envelope', access: 'leads.view', summary: 'Get a lead' },
    {
      method: 'PUT',
      path: '/leads/:id',
      field: 'Mutation.updateLead',
      style: 'envelope',
      access: 'leads.manage',
      summary: 'Update a lead',
    },
    {
      method: 'POST',
      path: '/leads/:id/merge',
      field: 'Mutation.mergeLead',
      style: 'envelope',
      access: 'leads.manage',
      summary: 'Merge another lead into this one',
    },
    {
      method: 'DELETE',
      path: '/leads/:id',
      field: 'Mutation.deleteLead',
      style: 'envelope',
      wrap: 'none',
      access: 'leads.manage',
      summary: 'Delete a lead',
    },
    {
      method: 'GET',
      path: '/lead-statuses',
      field: 'Query.leadStatuses',
      style: 'envelope',
      access: 'leads.view',
      summary: 'List lead statuses',
    },
    {
      method: 'POST',
      path: '/lead-statuses',
      field: 'Mutation.createLeadStatus',
      style: 'envelope',
      status: 201,
      access: 'leads.manage',
      summary: 'Create a lead status',
    },
    { method: 'GET', path: '/tags', field: 'Query.tags', style: 'envelope', access: ['leads.view', 'pipeline.view'], summary: 'List tags' },
    {
      method: 'POST',
      path: '/tags',
      field: 'Mutation.createTag',
      style: 'envelope',
      status: 201,
      access: 'leads.manage',
      summary: 'Create a tag',
    },
    { method: 'PUT', path: '/tags/:id', field: 'Mutation.updateTag', style: 'envelope', access: 'leads.manage', summary: 'Update a tag' },
    {
      method: 'DELETE',
      path: '/tags/:id',
      field: 'Mutation.deleteTag',
      style: 'envelope',
      wrap: 'none',
      access: 'leads.manage',
      summary: 'Delete a tag',
    },
  ],
});
