// The knowledge base: assistants, knowledge items (text or files), their scope and exclusions, and the
// ranked full-text search assistants consult (bare style).
import { defineDomain } from '../manifest.js';
import { admitKnowledgeUpload } from './files.js';
import './fields.js';

export const knowledgeDomain = defineDomain({
  name: 'knowledge',
  description: 'The knowledge base: assistants, knowledge items (text or files), their scope and exclusions, and ranked full-text search. Bare style.',
  permissions: [
    { name: 'knowledge.view', roles: ['owner', 'admin', 'operator'], description: 'Read knowledge items and assistants, and search the knowledge base.' },
    { name: 'knowledge.manage', roles: ['owner', 'admin'], description: 'Create, change and delete knowledge items and their exclusions.' },
    { name: 'assistants.manage', roles: ['owner', 'admin'], description: 'Create, change and delete assistants.' },
  ],
  routes: [
    { method: 'GET', path: '/assistants', field: 'Query.assistants', style: 'bare', access: 'knowledge.view', summary: 'List assistants' },
    { method: 'POST', path: '/assistants', field: 'Mutation.createAssistant', style: 'bare', status: 201, access: 'assistants.manage', summary: 'Create an assistant' },
    { method: 'GET', path: '/assistants/:id', field: 'Query.assistant', style: 'bare', access: 'knowledge.view', summary: 'Get an assistant' },
    { method: 'PUT', path: '/assistants/:id', field: 'Mutation.updateAssistant', style: 'bare', access: 'assistants.manage', summary: 'Update an assistant' },
    { method: 'DELETE', path: '/assistants/:id', field: 'Mutation.deleteAssistant', style: 'bare', status: 204, access: 'assistants.manage', summary: 'Delete an assistant (409 while it owns items)' },
    { method: 'GET', path: '/assistants/:id/knowledge', field: 'Query.assistantKnowledge', style: 'bare', access: 'knowledge.view', summary: 'Items an assistant sees' },
    { method: 'GET', path: '/knowledge', field: 'Query.knowledgeItems', style: 'bare', access: 'knowledge.view', summary: 'List knowledge items' },
    { method: 'GET', path: '/knowledge/search', field: 'Query.searchKnowledge', style: 'bare', access: 'knowledge.view', summary: 'Ranked full-text search' },
    { method: 'GET', path: '/knowledge/:id', field: 'Query.knowledgeItem', style: 'bare', access: 'knowledge.view', summary: 'Get a knowledge item' },
    // assistant_id is text ("" means global), so the 404 for an unknown assistant is stated here.
    { method: 'POST', path: '/knowledge', field: 'Mutation.createKnowledgeItem', style: 'bare', status: 201, access: 'knowledge.manage', summary: 'Create a knowledge item (JSON or multipart)', openapi: { errors: [404, 503] }, admission: admitKnowledgeUpload },
    { method: 'PUT', path: '/knowledge/:id', field: 'Mutation.updateKnowledgeItem', style: 'bare', access: 'knowledge.manage', summary: 'Update a knowledge item (JSON or multipart)', openapi: { errors: [503] }, admission: admitKnowledgeUpload },
    { method: 'DELETE', path: '/knowledge/:id', field: 'Mutation.deleteKnowledgeItem', style: 'bare', status: 204, access: 'knowledge.manage', summary: 'Delete a knowledge item' },
    { method: 'POST', path: '/knowledge/:id/exclusions/:assistant_id', field: 'Mutation.addKnowledgeExclusion', style: 'bare', access: 'knowledge.manage', summary: 'Hide a global item from an assistant' },
    { method: 'DELETE', path: '/knowledge/:id/exclusions/:assistant_id', field: 'Mutation.removeKnowledgeExclusion', style: 'bare', access: 'knowledge.manage', summary: 'Show a global item to an assistant again' },
    { method: 'PUT', path: '/knowledge/:id/exclusions', field: 'Mutation.setKnowledgeExclusions', style: 'bare', access: 'knowledge.manage', summary: 'Replace the exclusions of a global item' },
  ],
});
