// Root fields whose whole value PostgreSQL can build as JSON text in one statement (the deals list):
// the field carries a compiler in its extensions (`jsonField(...)`) that turns a selection into a
// runner, or refuses it (null) when the selection asks for something only resolvers give. GraphQL
// (http/graphql-json.ts) and REST (rest/handler.ts) splice the text into their answers without parsing
// it back; a refused selection, or any error, goes through the resolvers as before.
import {
  getArgumentValues,
  getDirectiveValues,
  getNamedType,
  getOperationAST,
  getVariableValues,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  OperationTypeNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { Context } from '../context/context.js';
import { countJsonFallback, logJsonRefusal, noteJsonInputRefused } from './json-fallbacks.js';

/** One response key of a selection: its field, and its own sub-selection when it has one. */
export interface SelectedField {
  key: string;
  name: string;
  /** The field nodes merged under this key (arguments are read from the first). */
  nodes: readonly FieldNode[];
  /**
   * The fields selected below it, as seen from `typeName`; null when they use what the collector does not
   * serve (fields with arguments too, unless `withArguments`: the compiler then reads them from `nodes`).
   */
  sub(typeName: string, withArguments?: boolean): SelectedField[] | null;
}

/** The JSON text of the field's value for the coerced arguments. */
export type JsonFieldRunner = (ctx: Context, args: Record<string, unknown>) => Promise<string>;

/** A runner for this selection of the field's type, or null to leave it to the resolvers. */
export type JsonFieldCompiler = (selection: SelectedField[]) => JsonFieldRunner | null;

/** Field extensions that mark a root field as served as JSON text by `compile`. */
export const jsonField = (compile: JsonFieldCompiler) => ({ jsonField: compile });

const jsonCompilerOf = (field: GraphQLField<unknown, unknown> | undefined) => field?.extensions?.jsonField as JsonFieldCompiler | undefined;

interface Collecting {
  fragments: Record<string, FragmentDefinitionNode>;
  variables: Record<string, unknown>;
  /** Set when a directive read a variable: the selection then holds for these variables only. */
  dynamic: boolean;
}

function included(node: SelectionSetNode['selections'][number], c: Collecting): boolean {
  if (!node.directives?.length) return true;
  if (node.directives.some((d) => d.arguments?.some((a) => a.value.kind === Kind.VARIABLE))) c.dynamic = true;
  return (
    getDirectiveValues(GraphQLSkipDirective, node, c.variables)?.if !== true &&
    getDirectiveValues(GraphQLIncludeDirective, node, c.variables)?.if !== false
  );
}

/**
 * The fields of some selection sets on an object type, merged by response key in first-seen order,
 * through fragments whose condition is that type. Null for anything else (abstract type conditions,
 * arguments unless `withArguments` (root fields), directives other than skip/include): the resolvers
 * handle those.
 */
export function collectFields(
  typeName: string,
  sets: readonly SelectionSetNode[],
  c: Collecting,
  withArguments = false,
): SelectedField[] | null {
  const byKey = new Map<string, { name: string; nodes: FieldNode[] }>();
  const visit = (set: SelectionSetNode, depth: number): boolean => {
    if (depth > 10) return false;
    for (const sel of set.selections) {
      if (sel.directives?.some((d) => d.name.value !== 'skip' && d.name.value !== 'include')) return false;
      if (!included(sel, c)) continue;
      if (sel.kind === Kind.FIELD) {
        if (!withArguments && sel.arguments?.length) return false;
        const key = sel.alias?.value ?? sel.name.value;
        const seen = byKey.get(key);
        if (seen) seen.nodes.push(sel);
        else byKey.set(key, { name: sel.name.value, nodes: [sel] });
        continue;
      }
      const fragment = sel.kind === Kind.INLINE_FRAGMENT ? sel : c.fragments[sel.name.value];
      if (!fragment || (fragment.typeCondition && fragment.typeCondition.name.value !== typeName)) return false;
      if (!visit(fragment.selectionSet, depth + 1)) return false;
    }
    return true;
  };
  for (const set of sets) if (!visit(set, 0)) return null;
  return [...byKey].map(([key, { name, nodes }]) => ({
    key,
    name,
    nodes,
    sub: (childType, childArguments = false) =>
      collectFields(
        childType,
        nodes.map((n) => n.selectionSet).filter((s): s is SelectionSetNode => !!s),
        c,
        childArguments,
      ),
  }));
}

/** A root field of an operation served as JSON text: its response key, its coordinate (Query.x) and its runner. */
export interface JsonRootField {
  key: string;
  field: string;
  run(ctx: Context): Promise<string>;
}

interface CompiledRoot {
  key: string;
  coordinate: string;
  field?: GraphQLField<unknown, unknown>;
  node?: FieldNode;
  run: JsonFieldRunner;
}

/** An operation with root fields that have a JSON path, which it cannot take: those fields (counted per request). */
interface Refused {
  refused: string[];
}

/** Compiled operations, reused while their document is (Yoga caches documents by query text; REST has one per route). */
const compiled = new WeakMap<OperationDefinitionNode, CompiledRoot[] | Refused | null>();

/**
 * Runners for every root field of a query, when each of them has a compiler that takes its selection
 * and the variables coerce; null otherwise (the resolvers then answer, with their own errors; when a
 * field with a JSON path is left to them, that is counted: schema/json-fallbacks.ts). A root
 * `__typename` is answered as a constant.
 */
export function planJsonOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  rawVariables: Record<string, unknown>,
): JsonRootField[] | null {
  const operation = getOperationAST(document, operationName);
  if (operation?.operation !== OperationTypeNode.QUERY) return null;
  let roots = compiled.get(operation);
  if (roots === null) return null;
  if (roots && 'refused' in roots) return refuse(roots);
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], rawVariables);
  if (coerced.errors) {
    // Variables the schema refuses: the resolvers answer with the usual error.
    if (roots) noteJsonInputRefused(roots.flatMap((r) => (r.field ? [r.coordinate] : [])));
    return null;
  }
  if (roots === undefined) {
    const c: Collecting = { fragments: fragmentsOf(document), variables: coerced.coerced, dynamic: false };
    roots = compileRoots(schema, operation, c);
    if (roots && 'refused' in roots)
      logJsonRefusal(roots.refused, `operation ${operation.name?.value ?? '(anonymous)'}: a selection without a JSON path`);
    // A selection that @skip/@include decide by variables is compiled again for each request.
    if (!c.dynamic) compiled.set(operation, roots);
  }
  if (!roots) return null;
  if ('refused' in roots) return refuse(roots);
  const planned: JsonRootField[] = [];
  for (const { key, coordinate, field, node, run } of roots) {
    let args: Record<string, unknown> = {};
    try {
      if (field && node) args = getArgumentValues(field, node, coerced.coerced);
    } catch {
      noteJsonInputRefused(roots.flatMap((r) => (r.field ? [r.coordinate] : [])));
      return null;
    }
    planned.push({ key, field: coordinate, run: (ctx) => run(ctx, args) });
  }
  return planned;
}

function refuse(r: Refused): null {
  for (const field of r.refused) countJsonFallback(field, 'selection');
  return null;
}

/** The operation's runners; Refused when a root field with a JSON path cannot take it; null when none has one. */
function compileRoots(schema: GraphQLSchema, operation: OperationDefinitionNode, c: Collecting): CompiledRoot[] | Refused | null {
  const root = schema.getQueryType()!;
  const selection = collectFields(root.name, [operation.selectionSet], c, true);
  // Root fields with a JSON path that the operation names (directly, when the collector gave up).
  const names = selection
    ? selection.map((sel) => sel.name)
    : operation.selectionSet.selections.flatMap((sel) => (sel.kind === Kind.FIELD ? [sel.name.value] : []));
  const candidates = [...new Set(names.filter((name) => jsonCompilerOf(root.getFields()[name])).map((name) => `${root.name}.${name}`))];
  if (!selection?.length) return candidates.length ? { refused: candidates } : null;
  const roots: CompiledRoot[] = [];
  for (const sel of selection) {
    const coordinate = `${root.name}.${sel.name}`;
    if (sel.name === '__typename') {
      roots.push({ key: sel.key, coordinate, run: async () => JSON.stringify(root.name) });
      continue;
    }
    const field = root.getFields()[sel.name];
    const compile = jsonCompilerOf(field);
    const sub = compile && sel.sub(getNamedType(field.type).name);
    const run = sub && compile(sub);
    if (!run) return candidates.length ? { refused: candidates } : null;
    roots.push({ key: sel.key, coordinate, field, node: sel.nodes[0], run });
  }
  return roots;
}

function fragmentsOf(document: DocumentNode): Record<string, FragmentDefinitionNode> {
  const fragments: Record<string, FragmentDefinitionNode> = {};
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments[d.name.value] = d;
  return fragments;
}
