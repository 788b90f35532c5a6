// The event types cadences emit (events/types.ts): each names the enrolment, its cadence and lead, the
// step concerned and, for a stop, why.
import { defineEventTypes } from '../../events/types.js';

const uuid = (description: string) => ({ type: 'string', format: 'uuid', description });
const ENROLMENT = {
  enrolment_id: uuid('The enrolment.'),
  cadence_id: uuid('Its cadence.'),
  lead_id: uuid('Its lead.'),
  step: {
    type: 'integer',
    description: 'The step concerned: 0 at enrolment, the step sent, the last step sent, or the step a stop keeps from being sent.',
  },
  stop_reason: {
    type: ['string', 'null'],
    enum: ['replied', 'unenrolled', 'deal_won', 'deal_lost', 'cadence_deleted', 'send_failed', 'template_not_approved', null],
    description: 'Why it stopped (cadence.stopped); null otherwise.',
  },
};

export const CADENCE_EVENT_TYPES = defineEventTypes([
  // Listed before webhook.test, which closes the list.
  { type: 'cadence.enrolled', description: 'A lead was enrolled in a cadence.', extra: ENROLMENT, listedAfter: 'deal.deleted' },
  { type: 'cadence.step_sent', description: 'A step’s messages were queued for sending, each once, in message order.', extra: ENROLMENT },
  { type: 'cadence.completed', description: 'An enrolment sent its last step.', extra: ENROLMENT },
  {
    type: 'cadence.stopped',
    description:
      'An enrolment ended before its last step: the lead wrote (with stop_on_reply), a deal of the lead was won or lost, the lead was unenrolled, the cadence was deleted, or a send failed (status `failed`).',
    extra: ENROLMENT,
  },
]);

declare module '../../events/types.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds the types, declares nothing else
  interface EmittedEventTypes extends Record<(typeof CADENCE_EVENT_TYPES)[number]['type'], true> {}
}
