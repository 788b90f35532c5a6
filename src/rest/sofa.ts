// The REST API is generated from the GraphQL schema with sofa-api: sofa's settings (createSofa) and its
// own way of deriving a route's operation (buildOperationNodeForField with sofa's models, ignore list
// and depth) decide what each route selects. sofa is given a copy of the schema pruned to what REST
// serves: root fields of the route table, and no graph-only fields or arguments (GRAPH_ONLY), so each
// route selects exactly the spec's shape. Resolvers are the very same functions. The API reference
// (rest/openapi/) documents the very selection a route runs (restOperation).
//
// The dispatcher (rest/handler.ts) runs a route's operation itself, once: what sofa's router would do
// per route (router.js useHandler) is reproduced here without a second routing pass: the path parameters
// parsed as sofa parses them (checkPathParams), the compiled document executed with graphql-js, the
// root field's value as the answer's JSON text, the first error thrown to the dispatcher's answer().
import {
  execute,
  GraphQLBoolean,
  GraphQLError,
  isEqualType,
  isInputObjectType,
  isObjectType,
  isScalarType,
  Kind,
  OperationTypeNode,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type TypeNode,
  type VariableDefinitionNode,
} from 'graphql';
import { buildOperationNodeForField, MapperKind, mapSchema, pruneSchema } from '@graphql-tools/utils';
import { createSofa } from 'sofa-api';
import type { FieldRoute } from '../domains/manifest.js';
import { executionAttributes } from '../http/graphql-tracing.js';
import { answerTooLarge, jsonLongerThan, MAX_ANSWER_BYTES } from '../http/graphql-size.js';
import { yieldIfSpent } from '../schema/time-slices.js';
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

/** sofa's settings for a REST schema: the models it finds, and the ignore list and depth it is given. */
interface SofaSettings {
  schema: GraphQLSchema;
  models: string[];
  ignore: string[];
  depthLimit: number;
}
const settings = new WeakMap<GraphQLSchema, SofaSettings>();
function sofaOf(schema: GraphQLSchema): SofaSettings {
  let sofa = settings.get(schema);
  if (!sofa) {
    const config = { basePath: BASE_PATH, schema, ignore: objectTypeNames(schema), depthLimit: CIRCULAR_DEPTH };
    // sofa looks for models among the Query fields; a schema that routes only mutations has none.
    sofa = schema.getQueryType() ? createSofa(config) : { ...config, models: [] };
    settings.set(schema, sofa);
  }
  return sofa;
}

/**
 * The operation sofa builds for a root field of the REST schema (router.js createQueryRoute /
 * createMutationRoute): what a route runs, and what the API reference documents.
 */
export function restOperation(schema: GraphQLSchema, field: FieldRoute['field']): OperationDefinitionNode {
  const sofa = sofaOf(schema);
  const [root, name] = field.split('.');
  return buildOperationNodeForField({
    schema: sofa.schema,
    kind: root === 'Query' ? OperationTypeNode.QUERY : OperationTypeNode.MUTATION,
    field: name,
    models: sofa.models,
    ignore: sofa.ignore,
    circularReferenceDepth: sofa.depthLimit,
  });
}

/** A field route, compiled once: the document it executes. */
export interface RestField {
  document: DocumentNode;
  operationName: string | undefined;
  /** The root field: the key of the route's value in the result's data. */
  fieldName: string;
  variables: readonly VariableDefinitionNode[];
}

export function compileRestField(schema: GraphQLSchema, route: FieldRoute): RestField {
  const operation = restOperation(schema, route.field);
  return {
    document: { kind: Kind.DOCUMENT, definitions: [operation] },
    operationName: operation.name?.value,
    fieldName: route.field.split('.')[1],
    variables: operation.variableDefinitions ?? [],
  };
}

/**
 * sofa reads a variable named like a path parameter from the path and parses it before it executes
 * (router.js pickParam, parse.js parseVariable: a scalar goes through its `serialize`, so a UUID
 * parameter that is not one is refused). Its value is then dropped: the variables are the dispatcher's
 * (rest/variables.ts). A refusal is sofa's 400, the message as sofa words it.
 */
export function checkPathParams(schema: GraphQLSchema, field: RestField, params: Record<string, string>): void {
  for (const variable of field.variables) {
    const name = variable.variable.name.value;
    if (!Object.hasOwn(params, name)) continue;
    try {
      sofaParse(schema, decodeURIComponent(params[name]), variable.type);
    } catch (error) {
      const e = error as { message?: string; toString?: () => string };
      throw new GraphQLError(e.message || e.toString?.() || String(error), { extensions: { http: { status: 400 } } });
    }
  }
}

/** parse.js resolveVariable, as sofa 0.18 has it. */
function sofaParse(schema: GraphQLSchema, value: unknown, type: TypeNode): unknown {
  if (type.kind === Kind.NAMED_TYPE) {
    const named = schema.getType(type.name.value);
    if (isScalarType(named)) {
      if (isEqualType(GraphQLBoolean, named)) value = value === 'true' || value === true;
      return named.serialize(value);
    }
    if (isInputObjectType(named)) return value && typeof value === 'object' ? value : JSON.parse(value as string);
    return value;
  }
  if (type.kind === Kind.LIST_TYPE) return (Array.isArray(value) ? value : [value]).map((v) => sofaParse(schema, v, type.type));
  return sofaParse(schema, value, type.type);
}

/**
 * Executes a route's document with the dispatcher's variables and context: the root field's value as
 * JSON text, or the first error thrown (the dispatcher's answer() normalises it, errors.ts).
 */
export async function executeRestField(
  schema: GraphQLSchema,
  field: RestField,
  contextValue: unknown,
  variableValues: Record<string, unknown>,
): Promise<string> {
  const { document, operationName } = field;
  const run = async () => await withinAnswerSize(await execute({ schema, document, contextValue, variableValues, operationName }));
  const result = tracingEnabled()
    ? await traced('graphql.execute', executionAttributes(document, operationName, 'rest'), run)
    : await run();
  if (result.errors) throw result.errors[0];
  return JSON.stringify(result.data?.[field.fieldName] ?? null);
}

/**
 * An answer past 10 MB of JSON is refused (400) before any of its text is written (http/graphql-size.ts).
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
