// The catalogue of webhook event types: the types the domains emit (their manifests' `events`,
// events/types.ts), then this domain's test event. Each says what it means and which REST read its
// `data` is (decisions.md "Webhooks and deliveries": "the resource as its REST read returns it"). The
// payload schemas are not written here: the REST layer derives them from those reads' very selections
// (rest/openapi/webhooks.ts), for the OpenAPI `webhooks` section and for GET
// /backend/webhooks/event-types alike. The app hands the derived schemas to this domain
// (provideEventSchemas), since domains do not import the REST layer.
import type { JsonSchema } from '../manifest.js';
import { AppError } from '../../errors.js';
import { eventTypeSpecs, type EventTypeSpec } from '../../events/types.js';

/** The test event POST /backend/webhooks/{id}/test sends; no hook subscribes to it. */
export const TEST_EVENT = 'webhook.test';

const uuid = (description: string): JsonSchema => ({ type: 'string', format: 'uuid', description });

const TEST_EVENT_SPEC: EventTypeSpec = {
  type: TEST_EVENT,
  description: 'Sent only by POST /backend/webhooks/{id}/test, to check a receiver and its signature verification.',
  extra: { webhook_id: uuid('The webhook tested.'), message: { type: 'string', description: 'A fixed text.' } },
};

/** Every type a delivery may carry, in the order they are listed: the emitted ones, then the test event. */
export function eventCatalogue(): readonly EventTypeSpec[] {
  return [...eventTypeSpecs(), TEST_EVENT_SPEC];
}

/** The types a webhook may subscribe to, in listing order. */
export function subscribableEventTypes(): string[] {
  return eventTypeSpecs().map((s) => s.type);
}

let eventSchemas: (() => Record<string, JsonSchema>) | undefined;

/** Called by the app with the schemas the REST layer derives, by type (standalone JSON Schemas of `data`). */
export function provideEventSchemas(schemas: () => Record<string, JsonSchema>): void {
  eventSchemas = schemas;
}

/** GET /backend/webhooks/event-types: every type with its description and its `data` schema. */
export function eventTypes(): { type: string; description: string; schema: JsonSchema }[] {
  if (!eventSchemas) throw new AppError('INTERNAL', 'Esquemas de eventos indisponíveis');
  const schemas = eventSchemas();
  return eventCatalogue().map(({ type, description }) => ({ type, description, schema: schemas[type] }));
}
