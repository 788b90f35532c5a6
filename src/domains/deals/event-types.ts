// The event types deals emit (events/types.ts), with what the webhook documentation says of them: their
// `data` is the deal as `GET /backend/pipeline/deals/{id}` answers it (a deleted deal: its id).
import { defineEventTypes } from '../../events/types.js';

const DEAL = { field: 'Query.deal' } as const;
const uuid = (description: string) => ({ type: 'string', format: 'uuid', description });

export const DEAL_EVENT_TYPES = defineEventTypes([
  { type: 'deal.created', description: 'A deal was created.', read: DEAL },
  { type: 'deal.updated', description: 'A deal’s fields, lines, tags or owner changed.', read: DEAL },
  {
    type: 'deal.stage_changed',
    description: 'A deal moved to another stage (a move into won or lost sends it, then deal.won or deal.lost).',
    read: DEAL,
    extra: { from_stage_id: uuid('The stage before.'), to_stage_id: uuid('The stage now.') },
  },
  { type: 'deal.won', description: 'A deal entered its pipeline’s won stage.', read: DEAL },
  { type: 'deal.lost', description: 'A deal entered its pipeline’s lost stage (with its loss_reason).', read: DEAL },
  { type: 'deal.deleted', description: 'A deal was deleted.', extra: { id: uuid('The deleted deal.') } },
]);

declare module '../../events/types.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- adds the types, declares nothing else
  interface EmittedEventTypes extends Record<(typeof DEAL_EVENT_TYPES)[number]['type'], true> {}
}
