// How long a GraphQL list can be, declared on the field (decisions.md "Bounded work"): the cost estimate
// (http/graphql-cost.ts) counts each list at this bound, so the objects of an answer never exceed it.
// A list is a connection or a page (its `first`/`limit`), or carries one of these:
// - a cap the writes enforce (tags on a lead, stages in a pipeline), with an optional graph-only `first`
//   to ask for fewer: `first` is pruned from the REST schema, so REST answers stay whole; and the name
//   of its size in `list_sizes`, the longest such list the organisation holds (kept by the database's
//   triggers), which prices it when shorter than the cap;
// - a count, for the root lists the spec returns whole (tags, products…): the organisation's rows,
//   counted before the query runs.
// graphql-cost refuses to start on a schema with a list of objects that has none of them.
import { builder, GRAPH_ONLY } from './builder.js';

export interface ListBound {
  /** The list never holds more (enforced on write). */
  cap?: number;
  /** The capped list's row in `list_sizes` (its organisation's longest list of this kind). */
  sized?: ListSizeName;
  /** The list holds at most the organisation's rows of this table (with these column filters). */
  count?: CountedRows;
}

export interface CountedRows {
  /** A tenant table (a fixed name from code: it is spliced into the statement). */
  table: string;
  /** UUID columns the rows must match, from the field's arguments; an absent value does not filter. */
  by?: (args: Record<string, unknown>) => Record<string, unknown>;
}

/**
 * The capped lists whose longest length per organisation the database keeps (migration
 * `list_sizes`: "<table>.<parent column>", one trigger per name).
 */
export type ListSizeName =
  'deal_products.deal_id' | 'deal_tags.deal_id' | 'lead_tags.lead_id' | 'stages.pipeline_id' | 'department_members.department_id';

/** Field extensions: a list capped on write, priced at the organisation's longest such list when `sized`. */
export const listCap = (cap: number, sized?: ListSizeName) => ({ listBound: { cap, sized } satisfies ListBound });

/** Field extensions: a list of at most the organisation's rows of `table` (all counted in one statement). */
export const listCount = (table: string, by?: CountedRows['by']) => ({ listBound: { count: { table, by } } satisfies ListBound });

/** The items a capped list serves for `first`: all (up to the cap) when absent or not positive. */
export const servedOfCap = (first: unknown, cap: number) =>
  Number.isInteger(first) && (first as number) >= 1 ? Math.min(first as number, cap) : cap;

/**
 * What a capped list's resolver keeps for `first`: undefined (everything stored) when absent, so REST
 * answers stay whole even for rows written before the cap existed.
 */
export const takeOfFirst = (first: number | null | undefined, cap: number) => (first == null ? undefined : servedOfCap(first, cap));

/** A graph-only `first` argument for a capped list (the cost estimate counts it instead of the cap). */
export const firstOfCapArg = (cap: number) =>
  builder.args((t) => ({
    first: t.int({ extensions: GRAPH_ONLY, description: `Only the first n items (1 to ${cap}); all of them when omitted. GraphQL only.` }),
  }));
