// The event types messaging emits (events/types.ts), with what the webhook documentation says of them:
// a message's `data` is the message as a lead's message history answers it.
import { defineEventTypes } from '../../events/types.js';

const MESSAGE = { field: 'Query.leadMessages', path: ['data'] } as const;

export const MESSAGING_EVENT_TYPES = defineEventTypes([
  // Listed with the lead events, as decisions.md lists them, though the domains list has deals first.
  {
    type: 'message.received',
    description: 'An inbound message was stored (from a channel or the WhatsApp Cloud webhook).',
    read: MESSAGE,
    listedAfter: 'lead.status_changed',
  },
  { type: 'message.sent', description: 'An outbound message was accepted by its channel’s provider.', read: MESSAGE },
  {
    type: 'message.failed',
    description:
      'An outbound message failed: its provider refused it, its retries ran out, or the provider reported it failed after taking it (`error` says why).',
    read: MESSAGE,
  },
  { type: 'conversation.created', description: 'A conversation was opened for a lead.', read: { field: 'Query.conversation' } },
  {
    type: 'conversation.assigned',
    description: 'A conversation’s assignee changed: assigned by hand or by its department’s routing, or unassigned (`assignee_id` null).',
    extra: {
      id: { type: 'string', format: 'uuid', description: 'The conversation.' },
      assignee_id: { type: ['string', 'null'], format: 'uuid', description: 'Who answers it now, or null.' },
      previous_assignee_id: { type: ['string', 'null'], format: 'uuid', description: 'Who answered it before, or null.' },
    },
  },
]);

declare module '../../events/types.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds the types, declares nothing else
  interface EmittedEventTypes extends Record<(typeof MESSAGING_EVENT_TYPES)[number]['type'], true> {}
}
