// Generates the REST API from the GraphQL schema with sofa-api. sofa is given a copy of the schema
// pruned to what REST serves: root fields of the route table, and no graph-only fields or arguments (GRAPH_ONLY),
// so each route selects exactly the spec's shape. Resolvers are the very same functions. The API reference
// (rest/openapi/) documents the very selection sofa runs (restOperation).
import {
  execute,
  GraphQLError,
  isObjectType,
  OperationTypeNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { buildOperationNodeForField, MapperKind, mapSchema, pruneSchema } from '@graphql-tools/utils';
import { useSofa } from 'sofa-api';
import type { FieldRoute } from '../domains/manifest.js';
import { normalizeError } from '../errors.js';
import { executionAttributes } from '../http/graphql-tracing.js';
import { answerTooLarge, jsonLongerThan, MAX_ANSWER_BYTES } from '../http/graphql-size.js';
import { yieldIfSpent } from '../schema/time-slices.js';
import { log, errorText } from '../log.js';
import { traced, tracingEnabled } from '../observability/tracing.js';
import { BASE_PATH } from './route-table.js';

export function restSchema(schema: GraphQLSchema, routes: readonly FieldRoute[]): GraphQLSchema {
  const served = new Set(routes.map((r) => r.field));
  const mapped = mapSchema(schema, {
    [MapperKind.QUERY_ROOT_FIELD]: (field, name) => (served.has(`Query.${name}`) ? field : null),
    [MapperKind.MUTATION_ROOT_FIELD]: (field, name) => (served.has(`Mutation.${name}`) ? field : null),
    [MapperKind.OBJECT_FIELD]: (field) => (field.extensions?.graphOnly ? null : field),
    // Graph-only arguments (`first` on capped lists): REST answers stay whole.
    [MapperKind.ARGUMENT]: (argument) => (argument.extensions?.graphOnly ? null : argument),
  });
  return pruneSchema(mapped);
}

/** Embedded objects (tags, stages, products…) are returned whole, not reduced to {id}: every object type. */
const objectTypeNames = (schema: GraphQLSchema) =>
  Object.values(schema.getTypeMap())
    .filter((t) => isObjectType(t) && !t.name.startsWith('__'))
    .map((t) => t.name);

/** How deep sofa follows a type back into itself when it builds a route's selection. */
const CIRCULAR_DEPTH = 2;

/**
 * The operation sofa runs for a root field of the REST schema (the same options sofa is given), so the
 * API reference documents exactly the selection a route answers with.
 */
export function restOperation(schema: GraphQLSchema, field: FieldRoute['field']): OperationDefinitionNode {
  const [root, name] = field.split('.');
  return buildOperationNodeForField({
    schema,
    kind: root === 'Query' ? OperationTypeNode.QUERY : OperationTypeNode.MUTATION,
    field: name,
    ignore: objectTypeNames(schema),
    circularReferenceDepth: CIRCULAR_DEPTH,
  });
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
  const run = async () => await withinAnswerSize(await execute({ ...args, contextValue: call.context, variableValues: call.variables }));
  return tracingEnabled() ? traced('graphql.execute', executionAttributes(args.document, args.operationName, 'rest'), run) : run();
}

/**
 * An answer past 10 MB of JSON is refused (400) before sofa writes any of its text (http/graphql-size.ts).
 * The measure and then the JSON text each get a slice of the event loop of their own (schema/time-slices.ts).
 */
async function withinAnswerSize(result: ExecutionResult): Promise<ExecutionResult> {
  await yieldIfSpent();
  const tooLarge = jsonLongerThan(result.data, MAX_ANSWER_BYTES);
  await yieldIfSpent();
  if (!tooLarge) return result;
  const refusal = answerTooLarge();
  return { errors: [new GraphQLError(refusal.message, { originalError: refusal })] };
}

export function createSofaRouter(schema: GraphQLSchema, routes: readonly FieldRoute[]) {
  return useSofa({
    basePath: BASE_PATH,
    schema,
    execute: executeWithRestVariables as typeof execute,
    ignore: objectTypeNames(schema),
    depthLimit: CIRCULAR_DEPTH,
    routes: Object.fromEntries(
      routes.map((r) => [
        r.field,
        { method: r.method, path: r.path, responseStatus: r.status === 204 ? 200 : (r.status ?? 200), description: r.summary },
      ]),
    ),
    context: (serverContext: { restCall: RestCall }) => ({ restCall: serverContext.restCall }),
    // A neutral {kind, message, extra} the dispatcher re-dresses in the route's style.
    errorHandler: ((errors: readonly unknown[]) => {
      const { error, internal } = normalizeError(errors[0]);
      if (internal) log.error('unhandled error', { error: errorText(internal) });
      return new Response(JSON.stringify({ kind: error.kind, message: error.message, extra: error.extra }), {
        status: error.status,
        headers: { 'content-type': 'application/json' },
      });
    }) as never,
  });
}
