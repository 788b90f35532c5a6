// Every operation of the API, generated from the route table and the schema (never listed by hand), as
// calls the access and isolation matrices make: REST routes with their path and a well-typed body, root
// fields as GraphQL documents with well-typed variables. A new route or root field is in them at once.
import { randomUUID } from 'node:crypto';
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLSchema,
} from 'graphql';
import { domains } from '../../src/domains/index.js';
import { rootFieldAccess, type Access } from '../../src/auth/access.js';
import { buildRouteTable, type CompiledRoute } from '../../src/rest/route-table.js';
import type { Database } from '../../src/db/client.js';

/** A value of the argument's type, so a refusal cannot come from input checks; `named` overrides by argument name. */
export function sample(type: GraphQLInputType, named: (name: string) => unknown = () => undefined, argName = ''): unknown {
  const given = named(argName);
  if (given !== undefined) return given;
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) return [];
  const t = getNamedType(inner);
  if (isEnumType(t)) return t.getValues()[0].value;
  if (isInputObjectType(t)) {
    return Object.fromEntries(
      Object.values(t.getFields())
        .filter((f) => isNonNullType(f.type))
        .map((f) => [f.name, sample(f.type, named, f.name)]),
    );
  }
  switch (t.name) {
    case 'UUID':
      return randomUUID();
    case 'Int':
    case 'Float':
      return 1;
    case 'Boolean':
      return true;
    case 'DateTime':
      return new Date(Date.now() + 86_400_000).toISOString();
    case 'JSON':
    case 'JSONObject':
      return {};
    default:
      return 'x';
  }
}

export const takesFile = (field: GraphQLField<unknown, unknown>) => field.args.some((a) => getNamedType(a.type).name === 'File');

export function rootFieldOf(schema: GraphQLSchema, field: string): GraphQLField<unknown, unknown> {
  const [root, name] = field.split('.');
  return (root === 'Query' ? schema.getQueryType() : schema.getMutationType())!.getFields()[name];
}

export interface RestOperation {
  compiled: CompiledRoute;
  access: Access;
  method: string;
  /** Path parameters by name. */
  params: string[];
  field?: GraphQLField<unknown, unknown>;
}

/** Every REST route a key can call (not the platform's or public ones). */
export function restOperations(schema: GraphQLSchema): RestOperation[] {
  return buildRouteTable(domains)
    .routes.filter((c) => c.route.access !== 'public' && c.route.access !== 'platform')
    .map((compiled) => ({
      compiled,
      access: compiled.route.access,
      method: compiled.route.method,
      params: compiled.paramNames,
      field: compiled.route.field ? rootFieldOf(schema, compiled.route.field) : undefined,
    }));
}

/** The path of a route with its parameters filled by `value`. */
export function fillPath(op: RestOperation, value: (param: string) => string): string {
  let i = 0;
  return op.compiled.fullPath.replace(/:[^/]+/g, () => encodeURIComponent(value(op.params[i++])));
}

/** The JSON body of a write: every argument not in the path, required ones sampled, `extra` on top. */
export function restBody(
  op: RestOperation,
  named: (name: string) => unknown = () => undefined,
  all = false,
): Record<string, unknown> | undefined {
  if (op.method !== 'POST' && op.method !== 'PUT') return undefined;
  if (!op.field) return {};
  const inPath = new Set(op.params);
  const args = op.field.args.filter((a) => !inPath.has(a.name) && !(op.compiled.route.query ?? []).includes(a.name));
  return Object.fromEntries(
    args.filter((a) => isNonNullType(a.type) || (all && named(a.name) !== undefined)).map((a) => [a.name, sample(a.type, named, a.name)]),
  );
}

export interface GraphqlOperation {
  /** `Query.leads` */
  key: string;
  root: 'Query' | 'Mutation';
  field: GraphQLField<unknown, unknown>;
  access: Access;
}

/** Every Query and Mutation root field, with its declared access. */
export function graphqlOperations(schema: GraphQLSchema): GraphqlOperation[] {
  const declared = rootFieldAccess(domains);
  const out: GraphqlOperation[] = [];
  for (const root of ['Query', 'Mutation'] as const) {
    const type = root === 'Query' ? schema.getQueryType()! : schema.getMutationType()!;
    for (const field of Object.values(type.getFields())) {
      const key = `${root}.${field.name}`;
      const access = declared.get(key as never);
      if (access === undefined) throw new Error(`${key} has no declared access`);
      if (access !== 'platform') out.push({ key, root, field, access });
    }
  }
  return out;
}

const typeText = (arg: GraphQLArgument) => String(arg.type);

/**
 * One document selecting each of `ops` (all Query or all Mutation) once, with its arguments as variables
 * (`<field>_<arg>`), selecting only `__typename` of object results.
 */
export function graphqlDocument(ops: GraphqlOperation[], named: (field: string, arg: string) => unknown = () => undefined, all = false) {
  const variables: Record<string, unknown> = {};
  const definitions: string[] = [];
  const selections = ops.map(({ field }) => {
    const args = field.args.filter((a) => isNonNullType(a.type) || (all && named(field.name, a.name) !== undefined));
    for (const a of args) {
      definitions.push(`$${field.name}_${a.name}: ${typeText(a)}`);
      variables[`${field.name}_${a.name}`] = sample(a.type, (n) => named(field.name, n), a.name);
    }
    const argText = args.length ? `(${args.map((a) => `${a.name}: $${field.name}_${a.name}`).join(', ')})` : '';
    return `${field.name}${argText}${isLeafType(getNamedType(field.type)) ? '' : ' { __typename }'}`;
  });
  const kind = ops[0].root === 'Query' ? 'query' : 'mutation';
  return { query: `${kind}${definitions.length ? `(${definitions.join(', ')})` : ''} { ${selections.join(' ')} }`, variables };
}

/** Whether a key with this role and these permissions may call an operation with `access` (the manifests' rule). */
export function allows(access: Access, key: { role: string; permissions: ReadonlySet<string>; narrowed: boolean }): boolean {
  if (access === 'member') return true;
  if (access === 'admin:full') return (key.role === 'owner' || key.role === 'admin') && !key.narrowed;
  const needed = typeof access === 'string' ? [access] : [...access];
  return needed.some((p) => key.permissions.has(p));
}

/**
 * A fingerprint of every row an organisation owns, table by table (and of the tables no organisation
 * owns), for "nothing changed" checks. A key's `last_used_at` is left out: using a key is not a change.
 */
export async function fingerprint(db: Database, tenantId: string): Promise<Record<string, string>> {
  const tables = await db.prisma.$queryRawUnsafe<{ table_name: string; tenant: boolean }[]>(
    `SELECT c.table_name::text AS table_name, bool_or(c.column_name::text = 'tenant_id') AS tenant
     FROM information_schema.columns c JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
     WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' AND c.table_name NOT LIKE '\\_prisma%'
     GROUP BY c.table_name ORDER BY c.table_name`,
  );
  const out: Record<string, string> = {};
  for (const { table_name, tenant } of tables) {
    const [row] = await db.prisma.$queryRawUnsafe<{ n: string; sum: string | null }[]>(
      `SELECT count(*)::text AS n, md5(string_agg((to_jsonb(t) - 'last_used_at')::text, ',' ORDER BY (to_jsonb(t) - 'last_used_at')::text)) AS sum
       FROM "${table_name}" t ${tenant ? 'WHERE tenant_id = $1::uuid' : ''}`,
      ...(tenant ? [tenantId] : []),
    );
    out[table_name] = `${row.n}:${row.sum ?? ''}`;
  }
  return out;
}
