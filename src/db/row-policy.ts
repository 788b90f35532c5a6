// Row policies: which rows of some models a caller may see, applied by the data layer. A domain declares
// a policy in its manifest (`rowPolicies`; messaging's operator visibility is one), registered once from
// the list of domains (domains/index.ts); this floor names no domain. The request's scoped client
// (TenantClients.forViewer, built by context/context.ts) carries the caller's visibility, and the tenant
// scope (tenant-scope.ts) adds it to every query:
//   - every read, update, delete, count, aggregate and groupBy of a bound model gets the model's condition
//     in its `where`;
//   - every to-many relation included or selected into a bound model (at any depth, and the relation
//     counts of `_count`) gets it in the relation's `where`, unless the relation is the inverse of the
//     model's `via` (a conversation's messages: the conversation was filtered already);
//   - a to-one relation into a bound model is read only through the model's `via` (a message's
//     conversation, visible whenever the message is); any other is refused before it runs: Prisma cannot
//     filter a to-one relation, and answering it would show a row the caller may not see;
//   - raw statements (`$tenantQuery`) get the conditions in SQL, by alias (`visible.conversation(c)`).
// A caller who sees everything (owners, admins, the system acting for an organisation: webhooks, jobs)
// gets the tenant's plain client, with the SQL conditions reduced to TRUE.
// Not covered: relation filters in a `where` (`lead.findMany({ where: { conversations: { some } } })`)
// and nested writes in `data` are passed on as written.
/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-argument --
   This module rewrites the untyped arguments of every Prisma model operation. */
import type { TenantViewer } from '../auth/viewer.js';
import type { Prisma } from '../generated/prisma/client.js';
import { getDatamodel } from '../generated/pothos-prisma-types.js';
import { FILTERING_OPERATIONS } from './operations.js';

/**
 * The raw-SQL conditions of the registered policies, by name: each takes the alias of a row of its table
 * and answers a boolean SQL expression. Declared empty here; a policy adds its own by augmenting this
 * interface (`declare module '…/db/row-policy.js'`).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface VisibleSql {}

/** What one caller may see of the bound models. */
export interface Visibility {
  /** Names the restriction (the scoped clients are kept by it); '' when the caller sees every row. */
  readonly key: string;
  /** The Prisma condition of each bound model ({} or absent: every row). */
  readonly where: Readonly<Partial<Record<Prisma.ModelName, object>>>;
  readonly sql: VisibleSql;
}

export interface RowPolicy {
  /**
   * The models the policy binds. `via`: a to-one relation of the model through which its rows are
   * visible (a message is visible when its conversation is), so that relation may be read from its rows.
   */
  readonly models: Readonly<Partial<Record<Prisma.ModelName, { via?: string }>>>;
  /** The caller's visibility; `null`: the system, acting for the whole organisation. */
  visibility(viewer: TenantViewer | null): Visibility;
}

const policies: RowPolicy[] = [];
let system: Visibility | undefined;

/** Called once with every domain's policies (domains/index.ts). */
export function registerRowPolicies(list: readonly RowPolicy[]): void {
  policies.push(...list);
  system = undefined;
}

/** Raw SQL conditions of an entry point that registered no policy: a statement that asks for one is a programming error. */
const unregisteredSql = new Proxy({} as VisibleSql, {
  get(_target, name) {
    throw new Error(`No row policy offers visible.${String(name)}: import src/domains/index.js in this entry point`);
  },
});

function merged(viewer: TenantViewer | null): Visibility {
  if (!policies.length) return { key: '', where: {}, sql: unregisteredSql };
  if (policies.length === 1) return policies[0].visibility(viewer);
  const parts = policies.map((p) => p.visibility(viewer));
  const where: Partial<Record<Prisma.ModelName, object>> = {};
  for (const part of parts)
    for (const [model, condition] of Object.entries(part.where) as [Prisma.ModelName, object][])
      where[model] = where[model] ? { AND: [where[model], condition] } : condition;
  return {
    key: parts
      .map((p) => p.key)
      .filter(Boolean)
      .join('|'),
    where,
    sql: Object.assign({}, ...parts.map((p) => p.sql)),
  };
}

/** The caller's visibility. An entry point that did not register the domains' policies is refused (fail closed). */
export function visibilityOf(viewer: TenantViewer): Visibility {
  if (!policies.length) throw new Error('No row policies registered: import src/domains/index.js in this entry point');
  return merged(viewer);
}

/** The system's visibility (every row); the SQL conditions are TRUE. */
export function systemVisibility(): Visibility {
  return (system ??= merged(null));
}

// ---- Applying a visibility to a Prisma operation's arguments ----

/** Operations whose `where` selects the rows they read, change or remove (an upsert's, the row it replaces). */
const WHERE_OPERATIONS = new Set<string>([...FILTERING_OPERATIONS, 'upsert']);

type Args = Record<string, any>;
interface Relation {
  target: string;
  isList: boolean;
}

let relations: Map<string, Map<string, Relation>> | undefined;

/** Each model's relation fields, from the schema's DMMF (as the Pothos generator wrote it). */
function relationsOf(model: string): Map<string, Relation> | undefined {
  if (!relations) {
    relations = new Map();
    for (const [name, m] of Object.entries(getDatamodel().datamodel.models)) {
      const fields = new Map<string, Relation>();
      for (const f of m.fields) if (f.kind === 'object') fields.set(f.name, { target: f.type, isList: f.isList });
      relations.set(name, fields);
    }
  }
  return relations.get(model);
}

/** The bound models' `via` relations, from every registered policy. */
function viaOf(model: string): string | undefined {
  for (const p of policies) {
    const via = p.models[model as Prisma.ModelName]?.via;
    if (via) return via;
  }
  return undefined;
}

const conditionOf = (v: Visibility, model: string): object | undefined => {
  const c = v.where[model as Prisma.ModelName];
  return c && Object.keys(c).length ? c : undefined;
};

/** `where` with `condition` added (kept at the top level: a unique `where` keeps its unique fields). */
function withCondition(where: Args | undefined, condition: object): Args {
  if (!where) return { AND: [condition] };
  const and = where.AND === undefined ? [] : Array.isArray(where.AND) ? where.AND : [where.AND];
  return { ...where, AND: [...and, condition] };
}

/** Whether `relation` of `parent` is the inverse of its target's `via` (the rows follow the parent's visibility). */
function followsParent(parent: string, relation: Relation): boolean {
  const via = viaOf(relation.target);
  return via !== undefined && relationsOf(relation.target)?.get(via)?.target === parent;
}

/** A relation read (`true` or its arguments) with `condition` in its `where`. */
const filteredRead = (nested: unknown, condition: object): Args =>
  nested && typeof nested === 'object' ? { ...nested, where: withCondition((nested as Args).where, condition) } : { where: condition };

/** The relation counts of `_count` on `model`, each of a bound model filtered. */
function filteredCounts(model: string, counts: unknown, v: Visibility): unknown {
  const fields = relationsOf(model);
  if (!fields || !counts) return counts;
  let select: Args;
  if (counts === true) {
    // Every list relation counted: spelled out, so the bound ones can be filtered.
    select = {};
    for (const [name, r] of fields) if (r.isList) select[name] = true;
  } else if (typeof counts === 'object' && (counts as Args).select && typeof (counts as Args).select === 'object') {
    select = (counts as Args).select;
  } else return counts;
  let changed: Args | undefined;
  for (const [name, nested] of Object.entries(select)) {
    const relation = fields.get(name);
    const condition = relation && nested && !followsParent(model, relation) ? conditionOf(v, relation.target) : undefined;
    if (condition) (changed ??= { ...select })[name] = filteredRead(nested, condition);
  }
  if (!changed) return counts === true ? { select } : counts;
  return { ...(counts === true ? {} : (counts as Args)), select: changed };
}

/** `args` of an operation on `model` with every relation it includes or selects filtered (see the header). */
function filteredRelations(model: string, args: Args, v: Visibility): Args {
  const fields = relationsOf(model);
  if (!fields) return args;
  let out = args;
  for (const nesting of ['include', 'select'] as const) {
    const selection = args[nesting];
    if (!selection || typeof selection !== 'object') continue;
    let changed: Args | undefined;
    for (const [name, nested] of Object.entries(selection)) {
      if (!nested) continue;
      if (name === '_count') {
        const counts = filteredCounts(model, nested, v);
        if (counts !== nested) (changed ??= { ...selection })[name] = counts;
        continue;
      }
      const relation = fields.get(name);
      if (!relation) continue;
      const condition = conditionOf(v, relation.target);
      let read: unknown = nested;
      if (condition && relation.isList && !followsParent(model, relation)) read = filteredRead(nested, condition);
      else if (condition && !relation.isList && viaOf(model) !== name)
        throw new Error(`${model}.${name}: a to-one relation into ${relation.target}, which a row policy restricts, cannot be read here`);
      if (read && typeof read === 'object') read = filteredRelations(relation.target, read as Args, v);
      if (read !== nested) (changed ??= { ...selection })[name] = read;
    }
    if (changed) out = { ...out, [nesting]: changed };
  }
  return out;
}

/** The arguments of `operation` on `model` under the caller's visibility (see the header). */
export function visibleArgs(model: string, operation: string, args: Args, v: Visibility): Args {
  const condition = conditionOf(v, model);
  const out = condition && WHERE_OPERATIONS.has(operation) ? { ...args, where: withCondition(args.where, condition) } : args;
  return filteredRelations(model, out, v);
}
