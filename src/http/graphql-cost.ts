// The cost of a GraphQL operation, checked before it runs: every object a query can return costs 1,
// and a list multiplies the cost of what is under it by how many items it may return, so nested lists
// (pipelines × stages × deals) grow the way the response and the database work grow. Variables count:
// the check runs at execution, where their values are known (validation results are cached per
// document, whatever the variables).
import { getNamedType, getNullableType, getOperationAST, isCompositeType, isListType, Kind, type GraphQLSchema } from 'graphql';
import type { FieldNode, GraphQLField, GraphQLNamedType, SelectionSetNode, FragmentDefinitionNode, OperationDefinitionNode, ValueNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { invalidInput } from '../errors.js';
import { requestError } from './graphql-errors.js';

/** Arguments that bound how many items a field returns (a page, a connection). */
const SIZE_ARGUMENTS = ['first', 'last', 'limit'];
/** What a size argument counts as when absent or not a positive integer: the default page. */
const DEFAULT_PAGE = 20;
/** No page serves more than this, whatever is asked. */
const MAX_PAGE = 100;
/** Items assumed for a list without a size argument (pipelines, stages, a deal's lines and tags). */
const UNBOUNDED_LIST = 10;

/**
 * Fields whose own work is far above one row: the board aggregates every deal of a pipeline per
 * stage; the paged lists also count every row under their filters.
 */
const FIELD_COSTS: Record<string, number> = {
  'Query.pipelineBoard': 1000,
  'Query.pipelineDeals': 200,
  'Query.leads': 100,
};

export interface CostLimitOptions {
  maxCost: number;
}

export function costLimitPlugin({ maxCost }: CostLimitOptions): Plugin {
  return {
    onSchemaChange({ schema }) {
      assertCostedFieldsExist(schema);
    },
    onExecute({ args, setResultAndStopExecution }) {
      const operation = getOperationAST(args.document, args.operationName);
      if (!operation) return;
      const fragments = new Map<string, FragmentDefinitionNode>();
      for (const d of args.document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
      const root = args.schema.getRootType(operation.operation);
      if (!root) return;
      // A variable left out takes its default, as the resolver will see it.
      const variables: Record<string, unknown> = {};
      for (const v of operation.variableDefinitions ?? []) if (v.defaultValue) variables[v.variable.name.value] = valueOf(v.defaultValue, {});
      Object.assign(variables, args.variableValues);
      const cost = costOf(operation, root, { schema: args.schema, fragments, variables, readVariables: false });
      if (cost > maxCost) {
        const refusal = invalidInput(
          `Consulta custosa demais: custo estimado ${cost}, máximo ${maxCost}. Peça menos itens por lista (first, limit) ou divida a consulta.`,
          { cost, max_cost: maxCost },
        );
        setResultAndStopExecution({ errors: [requestError(refusal, { nodes: [operation] })] });
      }
    },
  };
}

interface Walk {
  schema: GraphQLSchema;
  fragments: Map<string, FragmentDefinitionNode>;
  variables: Record<string, unknown>;
  /** Set when a size argument was a variable: the cost then holds for these variables only. */
  readVariables: boolean;
}

/** Costs of operations that read no variable, kept while their document is (Yoga reuses it per query text). */
const knownCosts = new WeakMap<OperationDefinitionNode, number>();

function costOf(operation: OperationDefinitionNode, root: GraphQLNamedType, walk: Walk): number {
  const known = knownCosts.get(operation);
  if (known !== undefined) return known;
  const cost = operationCost(operation.selectionSet, root, walk);
  if (!walk.readVariables) knownCosts.set(operation, cost);
  return cost;
}

/** The estimated cost of a selection set on `type`. */
function operationCost(set: SelectionSetNode, type: GraphQLNamedType, walk: Walk): number {
  return selectionCost(set, type, undefined, walk, new Set());
}

/** `pageSize`: the size argument of the field holding this set, which its list (`edges`, `data`) takes. */
function selectionCost(set: SelectionSetNode, type: GraphQLNamedType, pageSize: number | undefined, walk: Walk, inFragments: Set<string>): number {
  let total = 0;
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      total += fieldCost(selection, type, pageSize, walk, inFragments);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const on = selection.typeCondition ? walk.schema.getType(selection.typeCondition.name.value) : type;
      total += selectionCost(selection.selectionSet, on ?? type, pageSize, walk, inFragments);
    } else {
      const name = selection.name.value;
      const fragment = walk.fragments.get(name);
      // A cycle is refused by validation; here it only must not recurse forever.
      if (!fragment || inFragments.has(name)) continue;
      const on = walk.schema.getType(fragment.typeCondition.name.value) ?? type;
      total += selectionCost(fragment.selectionSet, on, pageSize, walk, new Set(inFragments).add(name));
    }
  }
  return total;
}

function fieldCost(node: FieldNode, parent: GraphQLNamedType, pageSize: number | undefined, walk: Walk, inFragments: Set<string>): number {
  const name = node.name.value;
  // Introspection is bounded by the schema's size (GraphiQL asks for all of it).
  if (name.startsWith('__') || !('getFields' in parent)) return 0;
  const field = parent.getFields()[name] as GraphQLField<unknown, unknown> | undefined;
  if (!field) return 0;
  const named = getNamedType(field.type);
  const isList = isListType(getNullableType(field.type));
  const size = sizeArgument(node, walk);
  const own = FIELD_COSTS[`${parent.name}.${name}`] ?? (isCompositeType(named) ? 1 : 0);
  const below = node.selectionSet ? selectionCost(node.selectionSet, named, isList ? undefined : size, walk, inFragments) : 0;
  const items = isList ? (size ?? pageSize ?? UNBOUNDED_LIST) : 1;
  return items * (own + below);
}

/** The largest of the field's size arguments, as its resolver will serve it; undefined without one. */
function sizeArgument(node: FieldNode, walk: Walk): number | undefined {
  let size: number | undefined;
  for (const argument of node.arguments ?? []) {
    if (!SIZE_ARGUMENTS.includes(argument.name.value)) continue;
    if (argument.value.kind === Kind.VARIABLE) walk.readVariables = true;
    const n = valueOf(argument.value, walk.variables);
    const served = Number.isInteger(n) && (n as number) >= 1 ? Math.min(n as number, MAX_PAGE) : DEFAULT_PAGE;
    size = Math.max(size ?? 0, served);
  }
  return size;
}

function valueOf(value: ValueNode, variables: Record<string, unknown>): unknown {
  if (value.kind === Kind.INT) return Number(value.value);
  if (value.kind === Kind.VARIABLE) return variables[value.name.value];
  return undefined;
}

/** A renamed field must not silently lose its cost. */
function assertCostedFieldsExist(schema: GraphQLSchema) {
  for (const key of Object.keys(FIELD_COSTS)) {
    const [typeName, fieldName] = key.split('.');
    const type = schema.getType(typeName);
    if (!type || !('getFields' in type) || !type.getFields()[fieldName]) throw new Error(`graphql-cost: ${key} is not in the schema`);
  }
}
