// The event types leads emit (events/types.ts), with what the webhook documentation says of them: their
// `data` is the lead as `GET /backend/leads/{id}` answers it.
import { defineEventTypes } from '../../events/types.js';

const LEAD = { field: 'Query.lead' } as const;
const nullableUuid = (description: string) => ({ type: ['string', 'null'], format: 'uuid', description });

export const LEAD_EVENT_TYPES = defineEventTypes([
  {
    type: 'lead.created',
    description: 'A lead was created (through the API, a deal with a new lead, or an inbound message from a new phone).',
    read: LEAD,
  },
  { type: 'lead.updated', description: 'A lead’s fields, tags or status changed.', read: LEAD },
  {
    type: 'lead.status_changed',
    description: 'A lead’s status changed (sent after lead.updated).',
    read: LEAD,
    extra: { from_status_id: nullableUuid('The status before.'), to_status_id: nullableUuid('The status now.') },
  },
  {
    type: 'lead.merged',
    description:
      'Another lead was merged into this one (`POST /backend/leads/{id}/merge`): its conversations, messages, deals and tags are this lead’s now, and `source_id` no longer exists (sent after lead.updated).',
    read: LEAD,
    extra: { source_id: { type: 'string', format: 'uuid', description: 'The lead merged into this one, now deleted.' } },
  },
]);

declare module '../../events/types.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds the types, declares nothing else
  interface EmittedEventTypes extends Record<(typeof LEAD_EVENT_TYPES)[number]['type'], true> {}
}
