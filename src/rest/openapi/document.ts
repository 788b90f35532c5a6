// The OpenAPI 3.1 document of the REST API, generated from the route table (buildRouteTable over the
// domains' manifests) and the REST schema: paths, parameters, bodies, every answer's real shape and every error
// answer in the route's style. Nothing is written by hand, so a new domain's routes are documented
// from their first commit.
import { createRequire } from 'node:module';
import {
  GraphQLNonNull,
  isInputObjectType,
  isListType,
  isNonNullType,
  getNamedType,
  type FieldNode,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLSchema,
} from 'graphql';
import { permissionsOf, type Access } from '../../auth/access.js';
import type { DomainManifest, FieldRoute, JsonSchema, RouteSpec } from '../../domains/manifest.js';
import { buildRouteTable, type CompiledRoute } from '../route-table.js';
import { restOperation, restSchema } from '../sofa.js';
import { errorResponse, errorResponseName, errorStatuses, takesIdempotencyKey } from './errors.js';
import { ExampleMaker, recordOf } from './examples.js';
import { holdsScalar, SchemaRegistry } from './schemas.js';
import { eventBodySchemas, webhooksSection } from './webhooks.js';

/** The API's version is the package's (semver; CHANGELOG.md lists what each one changed). */
const PACKAGE_VERSION = (createRequire(import.meta.url)('../../../package.json') as { version: string }).version;

export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, Operation>> };
type Operation = Record<string, unknown> & { responses: Record<string, unknown> };

const DESCRIPTION = `The REST API of Funil, generated from the same schema as \`/graphql\` (the same resolvers answer both).

Authenticate with \`Authorization: Bearer <API key>\`. The platform routes (\`/backend/admin/*\`) take the \`ADMIN_TOKEN\` instead.

Two answer styles, one per area: **bare** (pipelines, stages, deals, products…) answers the value itself and errors as \`{code, message}\`;
**envelope** (leads, tags, users, API keys…) answers \`{success: true, data}\` and errors as \`{success: false, error: {code, message}}\`.
A 401 is always the envelope form. Messages are in Portuguese: match on \`code\`.

With \`REQUIRE_HTTPS\` a plain-HTTP request gets 403 \`{success: false, error: {code: "FORBIDDEN"}}\` on every route.

Answers may gain keys in later versions: a client should ignore keys it does not know.`;

/** Where the printed copy (openapi.json) says the API is: a local \`npm start\`. A server publishes its PUBLIC_BASE_URL. */
export const LOCAL_SERVER_URL = 'http://127.0.0.1:4000';

export interface OpenApiOptions {
  /** The server the document describes (PUBLIC_BASE_URL); default LOCAL_SERVER_URL. */
  serverUrl?: string;
}

/** Every organisation's POST honours it (http/idempotency.ts). */
const IDEMPOTENCY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Up to 255 characters, unique per operation (a UUID). A retry with the same key and the same request within 24 hours gets the first answer again ' +
    '(header `Idempotent-Replayed: true`) and nothing runs twice; the same key with another request → 422; while the first still runs → 409. ' +
    'Not accepted on multipart (file) bodies (400).',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};

/** The OpenAPI path of a route: `/backend/leads/{id}`; a trailing `*` is the `{path}` parameter. */
export function openApiPath(compiled: CompiledRoute): string {
  return compiled.fullPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*$/, '{path}');
}

const ACCESS_TEXT: Record<string, string> = {
  public: 'No key needed.',
  platform: 'Platform operator only: `Authorization: Bearer <ADMIN_TOKEN>`.',
  member: 'Any valid key of the organisation; no permission needed.',
  'admin:full': 'Owner or admin role, with a full key (one without a `permissions` list).',
};
function accessText(access: Access): string {
  const permissions = permissionsOf(access);
  if (!permissions.length) return ACCESS_TEXT[access as string];
  const names = permissions.map((p) => `\`${p}\``);
  return names.length === 1 ? `Permission: ${names[0]}.` : `Permission: any of ${names.join(', ')}.`;
}

/** A route's operationId: the field name, or a handler's own (hinted or derived from method and path). */
export function operationIdOf(route: RouteSpec): string {
  if (route.openapi?.operationId) return route.openapi.operationId;
  if (route.field) return route.field.split('.')[1];
  const words = route.path.split('/').filter((s) => s && !s.startsWith(':') && s !== '*');
  return [route.method.toLowerCase(), ...words.map((w) => w.replace(/(^|[-_])(\w)/g, (_, __, c: string) => c.toUpperCase()))].join('');
}

/** The answer of a successful call, dressed in the route's style (http/responses.ts successResponse). */
function dressed(route: RouteSpec, result: JsonSchema): JsonSchema {
  const wrap = route.wrap ?? (route.style === 'envelope' ? 'data' : 'none');
  if (wrap === 'data') return { type: 'object', properties: { success: { const: true }, data: result }, required: ['success', 'data'] };
  if (wrap === 'spread') {
    const properties = (result.properties ?? {}) as Record<string, JsonSchema>;
    return { ...result, properties: { success: { const: true }, ...properties }, required: ['success', ...Object.keys(properties)] };
  }
  return result;
}

function successResponses(route: RouteSpec, result: JsonSchema | null): Record<string, unknown> {
  if (route.openapi?.responses) return route.openapi.responses;
  const status = String(route.status ?? 200);
  if (status === '204' || !result) return { [status]: { description: 'Done; no body.' } };
  return {
    [status]: {
      description: status === '201' ? 'Created.' : 'Success.',
      content: { 'application/json': { schema: dressed(route, result) } },
    },
  };
}

/** A synced list answered as a plain array gives its next page's cursor in the X-Next-Cursor header. */
function withNextCursorHeader(field: GraphQLField<unknown, unknown>, success: Record<string, unknown>): Record<string, unknown> {
  const unwrapped = isNonNullType(field.type) ? field.type.ofType : field.type;
  if (!isListType(unwrapped) || !field.args.some((a) => a.name === 'cursor')) return success;
  const header = {
    description: 'Sync (`updated_since` or `cursor` given): the `cursor` of the next page; absent on the last page and outside a sync.',
    schema: { type: 'string' },
  };
  return Object.fromEntries(
    Object.entries(success).map(([status, response]) => [status, { ...(response as object), headers: { 'X-Next-Cursor': header } }]),
  );
}

export function buildOpenApiDocument(
  schema: GraphQLSchema,
  domains: readonly DomainManifest[],
  options: OpenApiOptions = {},
): OpenApiDocument {
  const table = buildRouteTable(domains);
  const fieldRoutes = table.routes.map((c) => c.route).filter((r): r is FieldRoute => !!r.field);
  // Handler routes that take a field's arguments (`openapi.like`) are documented from that field too.
  const likeRoutes = table.routes.flatMap((c) =>
    c.route.openapi?.like ? [{ ...c.route, field: c.route.openapi.like } as FieldRoute] : [],
  );
  const rest = restSchema(schema, [...fieldRoutes, ...likeRoutes]);
  const registry = new SchemaRegistry();
  const errorComponents: Record<string, unknown> = {};
  const paths: Record<string, Record<string, Operation>> = {};

  function queryParameter(arg: GraphQLArgument) {
    const named = getNamedType(arg.type);
    const asJson = isInputObjectType(named) || named.name === 'JSON' || named.name === 'JSONObject';
    // A query parameter is absent or has a value: never null.
    const schema = registry.input(isNonNullType(arg.type) ? arg.type : new GraphQLNonNull(arg.type));
    return {
      name: arg.name,
      in: 'query',
      required: isNonNullType(arg.type) && arg.defaultValue === undefined,
      ...(arg.description ? { description: arg.description } : {}),
      ...(asJson
        ? { content: { 'application/json': { schema } } }
        : { schema, ...(isListType(isNonNullType(arg.type) ? arg.type.ofType : arg.type) ? { explode: true } : {}) }),
    };
  }

  function bodyOf(args: GraphQLArgument[]) {
    if (!args.length) return undefined;
    const files = args.filter((a) => holdsScalar(a.type, 'File'));
    const objectOf = (list: GraphQLArgument[]) => {
      const required = list.filter((a) => isNonNullType(a.type) && a.defaultValue === undefined).map((a) => a.name);
      return {
        type: 'object',
        properties: Object.fromEntries(
          list.map((a) => [a.name, { ...registry.input(a.type), ...(a.description ? { description: a.description } : {}) }]),
        ),
        ...(required.length ? { required } : {}),
      };
    };
    const content: Record<string, unknown> = {};
    if (!files.some((a) => isNonNullType(a.type)))
      content['application/json'] = { schema: objectOf(args.filter((a) => !files.includes(a))) };
    if (files.length) {
      const encoding = Object.fromEntries(
        args
          .filter((a) => isInputObjectType(getNamedType(a.type)) || getNamedType(a.type).name.startsWith('JSON'))
          .map((a) => [a.name, { contentType: 'application/json' }]),
      );
      content['multipart/form-data'] = { schema: objectOf(args), ...(Object.keys(encoding).length ? { encoding } : {}) };
    }
    return { required: args.some((a) => isNonNullType(a.type) && a.defaultValue === undefined), content };
  }

  function describeField(compiled: CompiledRoute, route: FieldRoute) {
    const [root, name] = route.field.split('.');
    const field: GraphQLField<unknown, unknown> = (root === 'Query' ? rest.getQueryType() : rest.getMutationType())!.getFields()[name];
    const selection = (restOperation(rest, route.field).selectionSet.selections[0] as FieldNode).selectionSet;
    const inPath = new Set(compiled.paramNames);
    const inQuery = new Set(route.method === 'GET' ? field.args.map((a) => a.name) : (route.query ?? []));
    const pathArgs = field.args.filter((a) => inPath.has(a.name));
    const parameters = [
      ...compiled.paramNames.map((param) => {
        const arg = pathArgs.find((a) => a.name === param)!;
        const type = isNonNullType(arg.type) ? arg.type : new GraphQLNonNull(arg.type);
        return {
          name: param,
          in: 'path',
          required: true,
          ...(arg.description ? { description: arg.description } : {}),
          schema: registry.input(type),
        };
      }),
      ...field.args.filter((a) => !inPath.has(a.name) && inQuery.has(a.name)).map(queryParameter),
    ];
    // Only POST and PUT bodies are read; a DELETE takes its path and its documented query parameters.
    const bodyArgs =
      route.method === 'POST' || route.method === 'PUT' ? field.args.filter((a) => !inPath.has(a.name) && !inQuery.has(a.name)) : [];
    const wrap = route.wrap ?? (route.style === 'envelope' ? 'data' : 'none');
    const result = route.status === 204 ? null : registry.output(field.type, selection, wrap === 'spread');
    return {
      description: [field.description, route.openapi?.description].filter(Boolean).join('\n\n'),
      parameters,
      requestBody: bodyOf(bodyArgs),
      success: withNextCursorHeader(field, successResponses(route, result)),
      facts: { takesInput: field.args.length > 0, namesRecords: inPath.size > 0 || field.args.some((a) => holdsScalar(a.type, 'UUID')) },
    };
  }

  function describeHandler(compiled: CompiledRoute, route: RouteSpec) {
    const docs = route.openapi ?? {};
    // The field's description and arguments, then the route's own words (describeField adds them).
    if (docs.like) return describeField(compiled, { ...route, field: docs.like, query: route.query ?? [] } as FieldRoute);
    const parameters = [
      ...compiled.paramNames.map((param) => ({
        name: param,
        in: 'path',
        required: true,
        schema: { type: 'string' },
        ...(param === 'path' && compiled.fullPath.endsWith('*') ? { description: 'The rest of the path (may contain `/`).' } : {}),
      })),
      ...(route.query ?? [])
        .filter((q) => !docs.parameters?.some((p) => p.name === q))
        .map((q) => ({ name: q, in: 'query', schema: { type: 'string' } })),
      ...(docs.parameters ?? []),
    ];
    return {
      description: docs.description ?? '',
      parameters,
      // A copy: examples are added to the document's body, and the route's declaration is built once per
      // process (a second document used to skip its example and number every later id differently).
      requestBody: docs.requestBody && structuredClone(docs.requestBody),
      success: successResponses(route, docs.result ?? {}),
      // A handler's path parameters are text it looks up: unknown → 404; its query and body can be refused
      // (headers such as Range are honoured or ignored, never refused).
      facts: { takesInput: parameters.some((p) => p.in === 'query') || !!docs.requestBody, namesRecords: compiled.paramNames.length > 0 },
    };
  }

  const operations: Operation[] = [];
  for (const compiled of table.routes) {
    const { route } = compiled;
    const described = route.field ? describeField(compiled, route as FieldRoute) : describeHandler(compiled, route);
    const platform = route.access === 'platform';
    const responses: Record<string, unknown> = { ...described.success };
    // Idempotency-Key is refused on multipart bodies: a route that takes only those does not take it.
    const bodyTypes = Object.keys(described.requestBody?.content ?? {});
    const idempotent = takesIdempotencyKey(route) && !(bodyTypes.length && bodyTypes.every((t) => t === 'multipart/form-data'));
    for (const status of errorStatuses(route, { ...described.facts, idempotent })) {
      const name = errorResponseName(route.style, status, platform);
      errorComponents[name] ??= errorResponse(route.style, status, platform);
      responses[String(status)] = { $ref: `#/components/responses/${name}` };
    }
    const description = [described.description, accessText(route.access)].filter(Boolean).join('\n\n');
    const parameters = idempotent ? [...described.parameters, IDEMPOTENCY_PARAMETER] : described.parameters;
    const operation: Operation = {
      operationId: operationIdOf(route),
      summary: route.summary ?? description.split('\n')[0],
      description,
      tags: [compiled.domain],
      ...(parameters.length ? { parameters } : {}),
      ...(described.requestBody ? { requestBody: described.requestBody } : {}),
      responses,
      security: platform ? [{ adminToken: [] }] : route.access === 'public' ? [] : [{ apiKey: [] }],
      'x-access': route.access,
      'x-permissions': permissionsOf(route.access),
    };
    operations.push(operation);
    (paths[openApiPath(compiled)] ??= {})[route.method.toLowerCase()] = operation;
  }

  const sortedPaths = Object.fromEntries(
    Object.keys(paths)
      .sort()
      .map((p) => [p, paths[p]]),
  );
  const webhooks = webhooksSection(eventBodySchemas(rest, registry));
  // Examples last, once every component they may refer to is registered.
  const examples = new ExampleMaker(registry.schemas);
  for (const operation of operations) addExamples(operation, examples);
  for (const item of Object.values(webhooks)) addExamples((item as { post: Operation }).post, examples);
  for (const response of Object.values(errorComponents)) addExamples({ responses: { error: response } }, examples);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Funil REST API',
      version: PACKAGE_VERSION,
      description: DESCRIPTION,
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [
      options.serverUrl
        ? { url: options.serverUrl, description: 'This server (its PUBLIC_BASE_URL).' }
        : {
            url: LOCAL_SERVER_URL,
            description:
              'A local server (`npm start`). A deployment serves this document at /backend/openapi.json with its own PUBLIC_BASE_URL here.',
          },
    ],
    tags: domains.filter((d) => d.routes.length).map((d) => ({ name: d.name, ...(d.description ? { description: d.description } : {}) })),
    security: [{ apiKey: [] }],
    paths: sortedPaths,
    webhooks,
    components: {
      schemas: Object.fromEntries(
        Object.keys(registry.schemas)
          .sort()
          .map((k) => [k, registry.schemas[k]]),
      ),
      responses: Object.fromEntries(
        Object.keys(errorComponents)
          .sort()
          .map((k) => [k, errorComponents[k]]),
      ),
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key of the organisation (`fnl_…`).' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'The platform operator token (`ADMIN_TOKEN`).' },
      },
    },
  };
}

type MediaTypes = Record<string, { schema?: Record<string, unknown>; example?: unknown }>;

/** An example on each JSON or multipart body of an operation (request and answers) that has none yet. */
function addExamples(
  operation: { operationId?: unknown; requestBody?: unknown; responses: Record<string, unknown> },
  examples: ExampleMaker,
): void {
  const request = (operation.requestBody as { content?: MediaTypes } | undefined)?.content ?? {};
  const record = recordOf(typeof operation.operationId === 'string' ? operation.operationId : '');
  for (const [type, media] of Object.entries(request))
    if (type !== 'application/octet-stream' && media.schema && media.example === undefined)
      media.example = examples.of(media.schema, '', true, record);
  for (const response of Object.values(operation.responses)) {
    const media = (response as { content?: MediaTypes }).content?.['application/json'];
    if (media?.schema && media.example === undefined) media.example = examples.of(media.schema);
  }
}
