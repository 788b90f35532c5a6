// The one place access is enforced. Every root field of the schema and every REST route declares who
// may call it (its domain manifest: a route's `access`, or `fields` for root fields no route serves);
// `guardRootFields` wraps each root field's resolver (and subscription, and JSON-text runner) with that
// check, so GraphQL and the REST field routes (the same fields) agree; the REST dispatcher
// applies `checkAccess` to handler routes. A root field without a declaration stops the start.
import { type GraphQLFieldConfig, type GraphQLSchema } from 'graphql';
import { MapperKind, mapSchema } from '@graphql-tools/utils';
import { AppError } from '../errors.js';
import { isPermission } from './permissions.js';
import { requireAccountManager, requirePlatformAdmin, requireTenant, type Viewer } from './viewer.js';

/**
 * Who may call a route or a root field: declared once, in the domains' manifests, and enforced here for
 * GraphQL and REST alike; the API reference shows it.
 * - `public`: no key (the media proxy); `platform`: ADMIN_TOKEN; `member`: any valid key of the organisation;
 * - `admin:full`: owner or admin role with a full (not narrowed) key: managing users and API keys;
 * - any other string: that permission (e.g. `pipeline.view`); a list: any one of those permissions.
 */
export type Access = 'public' | 'platform' | 'member' | 'admin:full' | (string & {}) | readonly string[];

/** A root field of the schema, e.g. `Query.leads`. */
export type RootField = `${'Query' | 'Mutation' | 'Subscription'}.${string}`;

/** What this module reads of a domain manifest (domains/manifest.ts): the access its routes and root fields declare. */
export interface AccessDeclarations {
  name: string;
  routes: readonly { method: string; path: string; access: Access; field?: RootField }[];
  /** The access of root fields no route serves. */
  fields?: Readonly<Record<RootField, Access>>;
}

/**
 * A JSON-text field's compiler (schema/json-fields.ts `JsonFieldCompiler`, above this floor), as much of
 * it as the guard wraps: the runner it makes gets the request's context, which carries the viewer.
 */
type JsonCompiler = (selection: never) => ((ctx: { viewer: Viewer | null }, args: Record<string, unknown>) => Promise<string>) | null;

const RULES = new Set(['public', 'platform', 'member', 'admin:full']);

/** The permissions a declaration names (any one of them allows the call); [] for the rules above. */
export function permissionsOf(access: Access): string[] {
  if (typeof access !== 'string') return [...access];
  return RULES.has(access) ? [] : [access];
}

/** Throws the answer a caller without `access` gets: 401 without a key, 403 without the permission. */
export function checkAccess(viewer: Viewer | null, access: Access): void {
  if (access === 'public') return;
  if (access === 'platform') {
    requirePlatformAdmin(viewer);
    return;
  }
  if (access === 'admin:full') {
    requireAccountManager(viewer);
    return;
  }
  const user = requireTenant(viewer);
  const needed = permissionsOf(access);
  if (needed.length && !needed.some((p) => user.permissions.has(p))) {
    throw new AppError('FORBIDDEN', `Permissão necessária: ${needed.join(' ou ')}`);
  }
}

/** Every root field's declared access, from the manifests; a field two declarations disagree on is a mistake. */
export function rootFieldAccess(domains: readonly AccessDeclarations[]): Map<RootField, Access> {
  const declared = new Map<RootField, Access>();
  const declare = (field: RootField, access: Access, where: string) => {
    const seen = declared.get(field);
    if (seen !== undefined && JSON.stringify(seen) !== JSON.stringify(access)) {
      throw new Error(`${field} is declared with two different accesses (${JSON.stringify(seen)} and ${JSON.stringify(access)}, ${where})`);
    }
    for (const p of permissionsOf(access)) if (!isPermission(p)) throw new Error(`${field} (${where}) needs the unknown permission ${p}`);
    if (typeof access !== 'string' && access.length === 0) throw new Error(`${field} (${where}) declares an empty permission list`);
    declared.set(field, access);
  };
  for (const d of domains) {
    for (const r of d.routes) if (r.field) declare(r.field, r.access, `${d.name}: ${r.method} ${r.path}`);
    for (const [field, access] of Object.entries(d.fields ?? {})) declare(field as RootField, access, `${d.name}: fields`);
  }
  return declared;
}

/**
 * The schema with every root field guarded by its declaration. Throws when a root field has none, or a
 * declaration names a field the schema does not have.
 */
export function guardRootFields(schema: GraphQLSchema, domains: readonly AccessDeclarations[]): GraphQLSchema {
  const declared = rootFieldAccess(domains);
  const missing: string[] = [];
  const guard =
    (root: 'Query' | 'Mutation' | 'Subscription') => (config: GraphQLFieldConfig<unknown, { viewer: Viewer | null }>, name: string) => {
      const key = `${root}.${name}` as RootField;
      const access = declared.get(key);
      declared.delete(key);
      if (access === undefined) {
        missing.push(key);
        return config;
      }
      const guarded: typeof config = { ...config, extensions: { ...config.extensions, access } as Record<string, unknown> };
      const { resolve, subscribe } = config;
      if (root === 'Subscription') {
        if (subscribe) {
          guarded.subscribe = (source, args, ctx, info) => {
            checkAccess(ctx.viewer, access);
            return subscribe(source, args, ctx, info);
          };
        }
        return guarded;
      }
      guarded.resolve = (source, args, ctx, info) => {
        checkAccess(ctx.viewer, access);
        return resolve ? resolve(source, args, ctx, info) : (source as Record<string, unknown> | undefined)?.[name];
      };
      // A field served as JSON text (schema/json-fields.ts) skips its resolver: its runner checks too.
      const compile = config.extensions?.jsonField as JsonCompiler | undefined;
      if (compile) {
        const checked: JsonCompiler = (selection) => {
          const run = compile(selection);
          return run && ((ctx, args) => (checkAccess(ctx.viewer, access), run(ctx, args)));
        };
        guarded.extensions = { ...guarded.extensions, jsonField: checked } as Record<string, unknown>;
      }
      return guarded;
    };
  const guardedSchema = mapSchema(schema, {
    [MapperKind.QUERY_ROOT_FIELD]: guard('Query'),
    [MapperKind.MUTATION_ROOT_FIELD]: guard('Mutation'),
    [MapperKind.SUBSCRIPTION_ROOT_FIELD]: guard('Subscription'),
  });
  if (missing.length) {
    throw new Error(
      `Root fields without a declared access (add a route or a \`fields\` entry to their domain manifest): ${missing.join(', ')}`,
    );
  }
  if (declared.size) throw new Error(`Access declared for root fields the schema does not have: ${[...declared.keys()].join(', ')}`);
  return guardedSchema;
}

/** The declared access of a root field of a guarded schema. */
export function accessOfField(schema: GraphQLSchema, root: 'Query' | 'Mutation' | 'Subscription', name: string): Access | undefined {
  const type = root === 'Query' ? schema.getQueryType() : root === 'Mutation' ? schema.getMutationType() : schema.getSubscriptionType();
  return type?.getFields()[name]?.extensions?.access as Access | undefined;
}
