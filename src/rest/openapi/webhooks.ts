// Webhook event payloads (the catalogue of domains/webhooks/event-types.ts: the domains' event types and
// the test event), derived from the REST reads their `data` repeats: each body `{type, timestamp, data}`
// with `data` the read's answer, built from the very selection that route runs, plus the event's extra
// keys. One source for the OpenAPI `webhooks` section and for
// GET /backend/webhooks/event-types (standalone schemas, with the components they use under `$defs`).
import {
  getNamedType,
  getNullableType,
  GraphQLNonNull,
  isListType,
  Kind,
  type FieldNode,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import type { JsonSchema } from '../../domains/manifest.js';
import { eventCatalogue } from '../../domains/webhooks/event-types.js';
import type { EventTypeSpec } from '../../events/types.js';
import { restOperation } from '../sofa.js';
import type { SchemaRegistry } from './schemas.js';

/** The answer schema of the resource a spec's `read` names, spelled out (extra keys are merged into it). */
function resourceSchema(rest: GraphQLSchema, registry: SchemaRegistry, read: NonNullable<EventTypeSpec['read']>): JsonSchema {
  const [root, name] = read.field.split('.');
  let type: GraphQLOutputType = (root === 'Query' ? rest.getQueryType() : rest.getMutationType())!.getFields()[name].type;
  let selection: SelectionSetNode | undefined = (restOperation(rest, read.field).selectionSet.selections[0] as FieldNode).selectionSet;
  for (const key of read.path ?? []) {
    const node = selection?.selections.find((s): s is FieldNode => s.kind === Kind.FIELD && s.name.value === key);
    type = (getNamedType(type) as GraphQLObjectType).getFields()[key].type;
    selection = node?.selectionSet;
  }
  // One resource: the item of a list, never null in an event.
  let item = getNullableType(type);
  if (isListType(item)) item = getNullableType(item.ofType);
  return registry.output(new GraphQLNonNull(item), selection, true);
}

function dataSchema(rest: GraphQLSchema, registry: SchemaRegistry, spec: EventTypeSpec): JsonSchema {
  const extra = spec.extra ?? {};
  const base = spec.read ? resourceSchema(rest, registry, spec.read) : { type: 'object', properties: {}, required: [] };
  return {
    ...base,
    properties: { ...(base.properties as Record<string, JsonSchema>), ...extra },
    required: [...(base.required as string[]), ...Object.keys(extra)],
  };
}

/** Whether the REST schema serves the read an event repeats (a document of some domains only may not). */
function served(rest: GraphQLSchema, spec: EventTypeSpec): boolean {
  if (!spec.read) return true;
  const [root, name] = spec.read.field.split('.');
  return !!(root === 'Query' ? rest.getQueryType() : rest.getMutationType())?.getFields()[name];
}

/** The body of each event type's delivery, by type. */
export function eventBodySchemas(rest: GraphQLSchema, registry: SchemaRegistry): Record<string, JsonSchema> {
  return Object.fromEntries(
    eventCatalogue()
      .filter((spec) => served(rest, spec))
      .map((spec) => [
        spec.type,
        {
          type: 'object',
          description: spec.description,
          properties: {
            type: { const: spec.type },
            timestamp: { type: 'string', format: 'date-time', description: 'When the event happened.' },
            data: dataSchema(rest, registry, spec),
          },
          required: ['type', 'timestamp', 'data'],
        },
      ]),
  );
}

const SIGNATURE_HEADERS = [
  { name: 'webhook-id', description: 'The same on every attempt and redelivery of one event to one webhook: de-duplicate on it.' },
  { name: 'webhook-timestamp', description: 'Seconds since the epoch, of this attempt.' },
  {
    name: 'webhook-signature',
    description:
      '`v1,<base64 HMAC-SHA256 of "id.timestamp.body">` keyed with the secret (Standard Webhooks); two, space-separated, for 24 hours after a regeneration.',
  },
].map((h) => ({ ...h, in: 'header', required: true, schema: { type: 'string' } }));

/** The OpenAPI 3.1 `webhooks` section: one POST per event type. */
export function webhooksSection(bodies: Record<string, JsonSchema>): Record<string, unknown> {
  return Object.fromEntries(
    eventCatalogue()
      .filter((spec) => bodies[spec.type])
      .map((spec) => [
        spec.type,
        {
          post: {
            operationId: webhookOperationId(spec.type),
            summary: spec.type,
            description: `${spec.description}\n\nSigned per Standard Webhooks; only a 2xx within 15 s acknowledges it (see GET /backend/webhooks/event-types).`,
            tags: ['webhooks'],
            parameters: SIGNATURE_HEADERS,
            requestBody: { required: true, content: { 'application/json': { schema: bodies[spec.type] } } },
            responses: { '200': { description: 'Any 2xx acknowledges the delivery; anything else (or no answer in 15 s) is retried.' } },
            security: [],
          },
        },
      ]),
  );
}

/** `deal.stage_changed` → `onDealStageChanged`: an operationId for the event's delivery. */
const webhookOperationId = (type: string) =>
  'on' +
  type
    .split(/[._]/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');

const COMPONENT_REF = /^#\/components\/schemas\/(.+)$/;

/** A schema that uses `#/components/schemas/…` made standalone: those components under `$defs`. */
export function standaloneSchema(schema: JsonSchema, components: Record<string, JsonSchema>): JsonSchema {
  const defs: Record<string, JsonSchema> = {};
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (!value || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      const match = key === '$ref' && typeof v === 'string' ? COMPONENT_REF.exec(v) : null;
      if (match) {
        const name = match[1];
        if (!(name in defs)) {
          defs[name] = {};
          defs[name] = rewrite(components[name]) as JsonSchema;
        }
        out.$ref = `#/$defs/${name}`;
      } else out[key] = rewrite(v);
    }
    return out;
  };
  const root = rewrite(schema) as JsonSchema;
  return { $schema: 'https://json-schema.org/draft/2020-12/schema', ...root, ...(Object.keys(defs).length ? { $defs: defs } : {}) };
}

/** Each event type's body schema, standalone, from the document (what GET /backend/webhooks/event-types shows). */
export function eventSchemasOf(document: Record<string, unknown>): Record<string, JsonSchema> {
  const components = (document.components as { schemas?: Record<string, JsonSchema> } | undefined)?.schemas ?? {};
  return Object.fromEntries(
    Object.entries(
      (document.webhooks ?? {}) as Record<string, { post: { requestBody: { content: Record<string, { schema: JsonSchema }> } } }>,
    ).map(([type, item]) => [type, standaloneSchema(item.post.requestBody.content['application/json'].schema, components)]),
  );
}
