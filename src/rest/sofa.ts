// Generates the REST API from the GraphQL schema with sofa-api. sofa is given a copy of the schema
// pruned to what REST serves: root fields of the route table, and no graph-only fields (GRAPH_ONLY),
// so each route selects exactly the spec's shape. Resolvers are the very same functions.
import { execute, isObjectType, type ExecutionArgs, type GraphQLSchema } from 'graphql';
import { MapperKind, mapSchema, pruneSchema } from '@graphql-tools/utils';
import { useSofa } from 'sofa-api';
import type { FieldRoute } from '../domains/manifest.js';
import { normalizeError } from '../errors.js';
import { log } from '../log.js';
import { BASE_PATH } from './route-table.js';

export function restSchema(schema: GraphQLSchema, routes: readonly FieldRoute[]): GraphQLSchema {
  const served = new Set(routes.map((r) => r.field));
  const mapped = mapSchema(schema, {
    [MapperKind.QUERY_ROOT_FIELD]: (field, name) => (served.has(`Query.${name}`) ? field : null),
    [MapperKind.MUTATION_ROOT_FIELD]: (field, name) => (served.has(`Mutation.${name}`) ? field : null),
    [MapperKind.OBJECT_FIELD]: (field) => (field.extensions?.graphOnly ? null : field),
  });
  return pruneSchema(mapped);
}

/** What the REST dispatcher hands sofa for one call: the variables it built, and the context. */
export interface RestCall {
  variables: Record<string, unknown>;
  context: unknown;
}

/**
 * sofa builds variables its own way (the query string wins over the body, values are coerced: 123 →
 * "123", "yes" → false, a string wrapped into a list). The dispatcher builds them strictly instead
 * (rest/variables.ts) and they replace sofa's here, so graphql-js sees exactly what the client sent.
 */
function executeWithRestVariables(args: ExecutionArgs) {
  const call = (args.contextValue as { restCall: RestCall }).restCall;
  return execute({ ...args, contextValue: call.context, variableValues: call.variables });
}

export function createSofaRouter(schema: GraphQLSchema, routes: readonly FieldRoute[]) {
  const objectTypes = Object.values(schema.getTypeMap())
    .filter((t) => isObjectType(t) && !t.name.startsWith('__'))
    .map((t) => t.name);
  return useSofa({
    basePath: BASE_PATH,
    schema,
    execute: executeWithRestVariables as typeof execute,
    // Embedded objects (tags, stages, products…) are returned whole, not reduced to {id}.
    ignore: objectTypes,
    depthLimit: 2,
    routes: Object.fromEntries(
      routes.map((r) => [r.field, { method: r.method, path: r.path, responseStatus: r.status === 204 ? 200 : (r.status ?? 200), description: r.summary }]),
    ),
    context: (serverContext: { restCall: RestCall }) => ({ restCall: serverContext.restCall }),
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
