// Cadences that run: the cadence record, enrolments, the scheduler that sends each step's templates on
// time, and the stops (a reply, a won or lost deal, a failed send). Reading is templates.view (every
// role); writing and enrolling are cadences.manage (owner, admin).
import { defineDomain } from '../manifest.js';
import { CADENCE_EVENT_TYPES } from './event-types.js';
import { cadenceSendQueue } from './scheduler.js';
import { CADENCE_REACTIONS } from './stops.js';
import './types.js';
import './fields.js';

export const cadencesDomain = defineDomain({
  name: 'cadences',
  description: 'Cadences: steps of approved templates sent to enrolled leads on time, stopped by a reply or a closed deal. Bare style.',
  permissions: [
    {
      name: 'cadences.manage',
      roles: ['owner', 'admin'],
      description: 'Create, change, pause and delete cadences; enrol and unenrol leads.',
    },
  ],
  routes: [
    { method: 'GET', path: '/cadences', field: 'Query.cadences', style: 'bare', access: 'templates.view', summary: 'List cadences' },
    {
      method: 'POST',
      path: '/cadences',
      field: 'Mutation.createCadence',
      style: 'bare',
      status: 201,
      access: 'cadences.manage',
      summary: 'Create a cadence',
    },
    { method: 'GET', path: '/cadences/:id', field: 'Query.cadence', style: 'bare', access: 'templates.view', summary: 'Get a cadence' },
    {
      method: 'PUT',
      path: '/cadences/:id',
      field: 'Mutation.updateCadence',
      style: 'bare',
      access: 'cadences.manage',
      summary: 'Change, pause or resume a cadence',
    },
    {
      method: 'DELETE',
      path: '/cadences/:id',
      field: 'Mutation.deleteCadence',
      style: 'bare',
      status: 204,
      access: 'cadences.manage',
      summary: 'Delete a cadence (its active enrolments stop)',
    },
    {
      method: 'POST',
      path: '/cadences/:id/enrolments',
      field: 'Mutation.enrolLeads',
      style: 'bare',
      access: 'cadences.manage',
      summary: 'Enrol leads in a cadence',
    },
    {
      method: 'GET',
      path: '/cadences/:id/enrolments',
      field: 'Query.cadenceEnrolments',
      style: 'bare',
      access: 'templates.view',
      summary: 'List a cadence’s enrolments',
    },
    {
      method: 'DELETE',
      path: '/cadences/:id/enrolments/:lead_id',
      field: 'Mutation.unenrolLead',
      style: 'bare',
      status: 204,
      access: 'cadences.manage',
      summary: 'Take a lead out of a cadence',
    },
  ],
  queues: [cadenceSendQueue],
  events: CADENCE_EVENT_TYPES,
  reactions: CADENCE_REACTIONS,
});
