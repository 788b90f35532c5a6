// Generates the REST API from the GraphQL schema with sofa-api. sofa is given a copy of the schema
// pruned to what REST serves: root fields of the route table, and no graph-only fields (GRAPH_ONLY),
// so each route selects exactly the spec's shape. Resolvers are the very same functions.
import { execute, isObjectType, Kind, type ExecutionArgs, type GraphQLSchema } from 'graphql';
import { MapperKind, mapSchema, pruneSchema } from '@graphql-tools/utils';
import { useSofa } from 'sofa-api';
import { normalizeError } from '../errors.js';
import { log } from '../log.js';
import type { RestRoute } from './route-table.js';

export function restSchema(schema: GraphQLSchema, routes: RestRoute[]): GraphQLSchema {
  const served = new Set(routes.map((r) => r.field));
  const mapped = mapSchema(schema, {
    [MapperKind.QUERY_ROOT_FIELD]: (field, name) => (served.has(`Query.${name}`) ? field : null),
    [MapperKind.MUTATION_ROOT_FIELD]: (field, name) => (served.has(`Mutation.${name}`) ? field : null),
    [MapperKind.OBJECT_FIELD]: (field) => (field.extensions?.graphOnly ? null : field),
  });
  return pruneSchema(mapped);
}

/**
 * sofa treats a JSON `null` like an absent key, so a REST client could never clear a field. The
 * dispatcher passes the keys that were sent as null; they become null variables here when the
 * operation declares them, exactly as a GraphQL client sending null would.
 */
function executeWithNulls(args: ExecutionArgs) {
  const nullKeys = (args.contextValue as { restNullKeys?: string[] } | undefined)?.restNullKeys;
  if (!nullKeys?.length) return execute(args);
  const operation = args.document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION);
  const declared = new Set(operation?.kind === Kind.OPERATION_DEFINITION ? operation.variableDefinitions?.map((v) => v.variable.name.value) : []);
  const variableValues = { ...args.variableValues };
  for (const key of nullKeys) if (declared.has(key) && !(key in variableValues)) variableValues[key] = null;
  return execute({ ...args, variableValues });
}

export function createSofaRouter(schema: GraphQLSchema, routes: RestRoute[], basePath: string) {
  const objectTypes = Object.values(schema.getTypeMap())
    .filter((t) => isObjectType(t) && !t.name.startsWith('__'))
    .map((t) => t.name);
  return useSofa({
    basePath,
    schema,
    execute: executeWithNulls as typeof execute,
    // Embedded objects (tags, stages, products…) are returned whole, not reduced to {id}.
    ignore: objectTypes,
    depthLimit: 2,
    routes: Object.fromEntries(
      routes.map((r) => [r.field, { method: r.method, path: r.path, responseStatus: r.status === 204 ? 200 : (r.status ?? 200), description: r.description }]),
    ),
    context: (serverContext: any) => serverContext.buildContext(),
    // A neutral {kind, message, extra} the dispatcher re-dresses in the route's style.
    errorHandler: ((errors: readonly unknown[]) => {
      const { error, internal } = normalizeError(errors[0]);
      if (internal) log.error('unhandled error', { error: String((internal as Error)?.stack ?? internal) });
      return new Response(JSON.stringify({ kind: error.kind, message: error.message, extra: error.extra }), {
        status: error.status,
        headers: { 'content-type': 'application/json' },
      });
    }) as never,
    openAPI: {
      info: {
        title: 'Funil REST API',
        version: '1.0.0',
        description: 'REST compatibility layer generated from the Funil GraphQL schema. Authenticate with `Authorization: Bearer <API key>`.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    } as never,
    swaggerUI: { endpoint: '/docs' },
  });
}
