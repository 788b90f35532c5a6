// The cost of a GraphQL operation, checked before it runs: every object a query can return costs 1,
// and a list multiplies the cost of what is under it by how many items it may return, so nested lists
// (pipelines × stages × deals) grow the way the response and the database work grow. Each list is
// counted at its bound (schema/list-bounds.ts): a page at its size, a capped list at its cap (or its
// `first`), a root list at the organisation's row count, read before the query runs. A query that does
// not fit so is priced again with each capped list at the longest such list its organisation holds
// (list_sizes, kept by the database), read in the same statement: a board of realistic deals is priced
// by what they hold. So the objects of an answer never exceed the estimate, and a schema with an
// unbounded list of objects does not start.
// Variables count: the check runs at execution, where their values are known (validation results are
// cached per document, whatever the variables).
import {
  getArgumentValues,
  getNamedType,
  getNullableType,
  getOperationAST,
  isCompositeType,
  isListType,
  isObjectType,
  Kind,
  OperationTypeNode,
  type GraphQLError,
  type GraphQLSchema,
} from 'graphql';
import type {
  FieldNode,
  GraphQLField,
  GraphQLNamedType,
  SelectionSetNode,
  FragmentDefinitionNode,
  OperationDefinitionNode,
  ValueNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context/context.js';
import { invalidInput } from '../errors.js';
import { Prisma } from '../generated/prisma/client.js';
import { servedOfCap, type ListBound } from '../schema/list-bounds.js';
import { requestError } from './graphql-errors.js';
import { executionArgs } from './execution-args.js';
import { tenantIs } from '../tenant-sql.js';

/** Arguments that bound how many items a field returns (a page, a connection). */
const SIZE_ARGUMENTS = ['first', 'last', 'limit'];
/** What a size argument counts as when absent or not a positive integer: the default page. */
const DEFAULT_PAGE = 20;
/** No page serves more than this, whatever is asked. */
const MAX_PAGE = 100;

/**
 * The most one operation may cost. Even with every list at its cap (a whole deal card of 200 lines, 100
 * tags, its lead and the lead's 100 tags is 402 objects) a page of 100 cards fits. Measured: 40,000
 * objects answer in about 0.5 s, the event loop's longest block about 0.2 s
 * (test/platform/answer-bounds.test.ts keeps /health under 1 s with the costliest query).
 */
export const MAX_COST = 50_000;

/**
 * Fields whose own work is far above one row: the board aggregates every deal of a pipeline per
 * stage (at most ten boards fit in one request); the paged lists also count every row under their filters.
 */
const FIELD_COSTS: Record<string, number> = {
  'Query.pipelineBoard': 5000,
  'Query.pipelineDeals': 1000,
  'Query.leads': 500,
};

export interface CostLimitOptions {
  maxCost: number;
}

/** The header that tells a client what its operation was priced at (the limit is `maxCost`). */
export const COST_HEADER = 'x-graphql-cost';

export function costLimitPlugin({ maxCost }: CostLimitOptions): Plugin {
  const costs = new WeakMap<Request, number>();
  return {
    onResponse({ request, response }) {
      const cost = costs.get(request);
      if (cost !== undefined) response.headers.set(COST_HEADER, String(cost));
    },
    onSchemaChange({ schema }) {
      assertCostedFieldsExist(schema as GraphQLSchema);
      assertListsBounded(schema as GraphQLSchema);
    },
    // A subscription is priced like a query: each event answers its selection.
    onExecute: ({ args, setResultAndStopExecution }) => priceOrRefuse(args, setResultAndStopExecution),
    onSubscribe: ({ args, setResultAndStopExecution }) => priceOrRefuse(args, setResultAndStopExecution),
  };

  async function priceOrRefuse(untyped: unknown, setResultAndStopExecution: (result: { errors: GraphQLError[] }) => void) {
    const args = executionArgs(untyped);
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
    const walk: Walk = {
      schema: args.schema,
      fragments,
      variables,
      readVariables: false,
      counts: new Map(),
      pending: new Map(),
      sawSized: false,
      wantsSizes: false,
    };
    const ctx = args.contextValue as unknown as Context;
    // Capped lists at their caps first: most operations fit so, and need no statement for it.
    let cost = costOf(operation, root, walk);
    // Only a query is priced by the organisation's sizes: a mutation's answer, or a subscription's
    // events, may hold a list its write made longer than any before.
    const bySizes = operation.operation === OperationTypeNode.QUERY && walk.sawSized;
    if (walk.pending.size) {
      // Root lists: the organisation's row counts, and its list sizes in the same statement when they may be needed.
      walk.wantsSizes = bySizes;
      await countPending(walk, ctx);
      cost = costOf(operation, root, walk);
    }
    if (cost > maxCost && bySizes) {
      if (!walk.sizes) {
        walk.wantsSizes = true;
        await countPending(walk, ctx);
      }
      cost = operationCost(operation.selectionSet, root, walk);
    }
    const request = (args.contextValue as { request?: Request }).request;
    if (request) costs.set(request, cost);
    if (cost > maxCost) {
      const refusal = invalidInput(
        `Consulta custosa demais: custo estimado ${cost}, máximo ${maxCost}. Peça menos itens por lista (first, last, limit; em listas como products e tags, first) ou divida a consulta.`,
        { cost, max_cost: maxCost },
      );
      setResultAndStopExecution({ errors: [requestError(refusal, { nodes: [operation] })] });
    }
  }
}

interface Walk {
  schema: GraphQLSchema;
  fragments: Map<string, FragmentDefinitionNode>;
  variables: Record<string, unknown>;
  /** Set when a size argument was a variable or a row count was read: the cost then holds for this request only. */
  readVariables: boolean;
  /** Row counts of counted lists, by table and filters. */
  counts: Map<string, number>;
  /** Counted lists met without a count yet, by the same key. */
  pending: Map<string, { table: string; filters: [string, string][] }>;
  /** The organisation's longest list of each sized kind, once read: capped lists are priced by it then. */
  sizes?: Map<string, number>;
  /** Set when a capped list with a size was met. */
  sawSized: boolean;
  /** Whether the next count reads the sizes too. */
  wantsSizes: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const IDENTIFIER = /^[a-z_]+$/;

/** Every pending count, and the list sizes when asked for, in one statement on the organisation's scoped client. */
async function countPending(walk: Walk, ctx: Context) {
  const entries = [...walk.pending];
  walk.pending.clear();
  let row: Record<string, unknown> = {};
  try {
    [row] = await ctx.db.$tenantQuery<Record<string, unknown>[]>(
      (tenant) =>
        Prisma.sql`SELECT ${Prisma.join([
          ...entries.map(([, { table, filters }], i) => {
            const conditions = [tenantIs(tenant), ...filters.map(([column, value]) => Prisma.sql`${Prisma.raw(column)} = ${value}::uuid`)];
            return Prisma.sql`(SELECT count(*) FROM ${Prisma.raw(table)} WHERE ${Prisma.join(conditions, ' AND ')})::int AS ${Prisma.raw(`c${i}`)}`;
          }),
          ...(walk.wantsSizes
            ? [Prisma.sql`(SELECT coalesce(json_object_agg(list, size), '{}'::json) FROM list_sizes WHERE ${tenantIs(tenant)}) AS sizes`]
            : []),
        ])}`,
    );
  } catch {
    // Without an organisation the fields themselves refuse (403): they cost nothing here.
  }
  entries.forEach(([key], i) => walk.counts.set(key, Number(row[`c${i}`] ?? 0)));
  if (walk.wantsSizes) walk.sizes = new Map(Object.entries((row.sizes ?? {}) as Record<string, number>).map(([k, v]) => [k, Number(v)]));
}

/** Costs of operations that read no variable, kept while their document is (Yoga reuses it per query text). */
const knownCosts = new WeakMap<OperationDefinitionNode, { cost: number; sawSized: boolean }>();

/** The cost with capped lists at their caps (or `first`). */
function costOf(operation: OperationDefinitionNode, root: GraphQLNamedType, walk: Walk): number {
  const known = knownCosts.get(operation);
  if (known !== undefined) {
    walk.sawSized ||= known.sawSized;
    return known.cost;
  }
  const cost = operationCost(operation.selectionSet, root, walk);
  if (!walk.readVariables) knownCosts.set(operation, { cost, sawSized: walk.sawSized });
  return cost;
}

/** The estimated cost of a selection set on `type`. */
function operationCost(set: SelectionSetNode, type: GraphQLNamedType, walk: Walk): number {
  return selectionCost(set, type, undefined, walk, new Set());
}

/** `pageSize`: the size argument of the field holding this set, which its list (`edges`, `data`) takes. */
function selectionCost(
  set: SelectionSetNode,
  type: GraphQLNamedType,
  pageSize: number | undefined,
  walk: Walk,
  inFragments: Set<string>,
): number {
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
  const bound = field.extensions?.listBound as ListBound | undefined;
  const size = bound ? undefined : sizeArgument(node, field, walk);
  const own = FIELD_COSTS[`${parent.name}.${name}`] ?? (isCompositeType(named) ? 1 : 0);
  const below = node.selectionSet ? selectionCost(node.selectionSet, named, isList ? undefined : size, walk, inFragments) : 0;
  const items = isList ? (bound ? boundItems(node, field, parent, bound, walk) : (size ?? pageSize ?? MAX_PAGE)) : 1;
  return items * (own + below);
}

/**
 * A capped list: its `first` or its cap, or the organisation's longest such list when shorter (0 until
 * read). A counted list: the count, once read (0 until then).
 */
function boundItems(
  node: FieldNode,
  field: GraphQLField<unknown, unknown>,
  parent: GraphQLNamedType,
  bound: ListBound,
  walk: Walk,
): number {
  let args: Record<string, unknown> = {};
  try {
    args = getArgumentValues(field, node, walk.variables);
  } catch {
    // Invalid arguments are refused by execution; the bound still holds.
  }
  if (node.arguments?.some((a) => a.value.kind === Kind.VARIABLE)) walk.readVariables = true;
  if (bound.cap !== undefined) {
    const served = servedOfCap(args.first, bound.cap);
    if (!bound.sized) return served;
    walk.sawSized = true;
    return walk.sizes ? Math.min(served, walk.sizes.get(bound.sized) ?? 0) : served;
  }
  const { table, by } = bound.count!;
  const filters: [string, string][] = [];
  for (const [column, value] of Object.entries(by?.(args) ?? {})) {
    if (value == null) continue;
    // A malformed id finds nothing (the resolver refuses it).
    if (typeof value !== 'string' || !UUID.test(value)) return 0;
    filters.push([column, value]);
  }
  if (!IDENTIFIER.test(table) || filters.some(([column]) => !IDENTIFIER.test(column)))
    throw new Error(`graphql-cost: bad table or column in ${parent.name}.${field.name}`);
  const key = JSON.stringify([table, filters]);
  walk.readVariables = true;
  const known = walk.counts.get(key);
  if (known !== undefined) return known;
  walk.pending.set(key, { table, filters });
  return 0;
}

/**
 * The page the field serves, as its resolver will: the largest of its size arguments, or the default
 * page when it takes one but none is given; undefined for a field without size arguments.
 */
function sizeArgument(node: FieldNode, field: GraphQLField<unknown, unknown>, walk: Walk): number | undefined {
  if (!field.args.some((a) => SIZE_ARGUMENTS.includes(a.name))) return undefined;
  let size: number | undefined;
  for (const argument of node.arguments ?? []) {
    if (!SIZE_ARGUMENTS.includes(argument.name.value)) continue;
    if (argument.value.kind === Kind.VARIABLE) walk.readVariables = true;
    const n = valueOf(argument.value, walk.variables);
    const served = Number.isInteger(n) && (n as number) >= 1 ? Math.min(n as number, MAX_PAGE) : DEFAULT_PAGE;
    size = Math.max(size ?? 0, served);
  }
  return size ?? DEFAULT_PAGE;
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

/**
 * Every list of objects must have a bound the estimate can use: its own size argument, a listBound, or
 * a type reached only through fields with a size argument (a connection's edges, a page's data).
 */
export function assertListsBounded(schema: GraphQLSchema) {
  const types = Object.values(schema.getTypeMap()).filter((t) => isObjectType(t) && !t.name.startsWith('__'));
  const fields = types.flatMap((t) =>
    Object.values((t as { getFields(): Record<string, GraphQLField<unknown, unknown>> }).getFields()).map((f) => ({ type: t, field: f })),
  );
  const sized = (f: GraphQLField<unknown, unknown>) => f.args.some((a) => SIZE_ARGUMENTS.includes(a.name));
  const paged = (typeName: string) => {
    const holders = fields.filter(({ field }) => getNamedType(field.type).name === typeName);
    return holders.length > 0 && holders.every(({ field }) => sized(field) && !isListType(getNullableType(field.type)));
  };
  const unbounded = fields
    .filter(({ field }) => isListType(getNullableType(field.type)) && isCompositeType(getNamedType(field.type)))
    .filter(({ type, field }) => !field.extensions?.listBound && !sized(field) && !paged(type.name))
    .map(({ type, field }) => `${type.name}.${field.name}`);
  if (unbounded.length) throw new Error(`graphql-cost: lists without a bound (a page size, listCap or listCount): ${unbounded.join(', ')}`);
}
