// The catalogue of webhook event types: what each means and which REST read its `data` is (decisions.md
// "Webhooks and deliveries": "the resource as its REST read returns it"). The payload schemas are not
// written here: the REST layer derives them from those reads' very selections (rest/openapi/webhooks.ts),
// for the OpenAPI `webhooks` section and for GET /backend/webhooks/event-types alike. The app hands the
// derived schemas to this domain (provideEventSchemas), since domains do not import the REST layer.
import type { JsonSchema } from '../manifest.js';
import { AppError } from '../../errors.js';
import type { EventType } from '../../events/emit.js';

/** The test event POST /backend/webhooks/{id}/test sends; no hook subscribes to it. */
export const TEST_EVENT = 'webhook.test';

export interface EventTypeSpec {
  type: EventType | typeof TEST_EVENT;
  description: string;
  /** The REST read whose answer `data` is: a root field, and the key path to the resource inside its answer. */
  read?: { field: `Query.${string}`; path?: string[] };
  /** Keys `data` has besides (or, without `read`, instead of) the resource. */
  extra?: Record<string, JsonSchema>;
}

const uuid = (description: string): JsonSchema => ({ type: 'string', format: 'uuid', description });
const nullableUuid = (description: string): JsonSchema => ({ type: ['string', 'null'], format: 'uuid', description });

const LEAD: EventTypeSpec['read'] = { field: 'Query.lead' };
const DEAL: EventTypeSpec['read'] = { field: 'Query.deal' };
const MESSAGE: EventTypeSpec['read'] = { field: 'Query.leadMessages', path: ['data'] };

export const EVENT_CATALOGUE: readonly EventTypeSpec[] = [
  { type: 'lead.created', description: 'A lead was created (through the API, a deal with a new lead, or an inbound message from a new phone).', read: LEAD },
  { type: 'lead.updated', description: 'A lead’s fields, tags or status changed.', read: LEAD },
  {
    type: 'lead.status_changed',
    description: 'A lead’s status changed (sent after lead.updated).',
    read: LEAD,
    extra: { from_status_id: nullableUuid('The status before.'), to_status_id: nullableUuid('The status now.') },
  },
  { type: 'message.received', description: 'An inbound message was stored (from a channel or the WhatsApp Cloud webhook).', read: MESSAGE },
  { type: 'message.sent', description: 'An outbound message was accepted by its channel’s provider.', read: MESSAGE },
  { type: 'conversation.created', description: 'A conversation was opened for a lead.', read: { field: 'Query.conversation' } },
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
  {
    type: TEST_EVENT,
    description: 'Sent only by POST /backend/webhooks/{id}/test, to check a receiver and its signature verification.',
    extra: { webhook_id: uuid('The webhook tested.'), message: { type: 'string', description: 'A fixed text.' } },
  },
];

let eventSchemas: (() => Record<string, JsonSchema>) | undefined;

/** Called by the app with the schemas the REST layer derives, by type (standalone JSON Schemas of `data`). */
export function provideEventSchemas(schemas: () => Record<string, JsonSchema>): void {
  eventSchemas = schemas;
}

/** GET /backend/webhooks/event-types: every type with its description and its `data` schema. */
export function eventTypes(): { type: string; description: string; schema: JsonSchema }[] {
  if (!eventSchemas) throw new AppError('INTERNAL', 'Esquemas de eventos indisponíveis');
  const schemas = eventSchemas();
  return EVENT_CATALOGUE.map(({ type, description }) => ({ type, description, schema: schemas[type] }));
}
