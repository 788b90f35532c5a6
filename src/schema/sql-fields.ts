// Fields declared once for the two ways an object is answered: by its resolvers, and as JSON text that
// PostgreSQL writes (the JSON path, json-fields.ts). Each declaration carries the field's GraphQL type
// and, beside it, the SQL expression that writes the same JSON value over the aliases of the statement
// reading the object (the way Grafast/PostGraphile attach SQL to a field). The Pothos fields are built
// from the declarations (`pothosFields`); the JSON path reads their `sql`. A drift test per object
// fills every column and compares both byte for byte.
import type { Context } from '../context/context.js';

export type SqlScalar = 'UUID' | 'String' | 'Int' | 'Float' | 'Boolean' | 'DateTime';

export interface SqlField<Source> {
  type: SqlScalar;
  nullable?: boolean;
  description?: string;
  /** A column of the source row exposed as is (Prisma's documentation comment describes it when no description is given). */
  column?: string;
  /** The resolvers' value, when it is not a column exposed as is. */
  resolve?: (source: Source, ctx: Context) => unknown;
  /** The same value as JSON, written by PostgreSQL. */
  sql: string;
}

export type SqlFields<Source> = Record<string, SqlField<Source>>;

/** The part of a Pothos object field builder the declarations use. */
interface FieldBuilder {
  expose(name: string, options: object): unknown;
  field(options: object): unknown;
}

/** The Pothos fields of the declarations, in their order. */
export function pothosFields<Source>(t: FieldBuilder, fields: SqlFields<Source>): Record<string, never> {
  return Object.fromEntries(
    Object.entries(fields).map(([name, f]) => {
      const options = { type: f.type, nullable: f.nullable ?? false, ...(f.description ? { description: f.description } : {}) };
      if (f.column) return [name, t.expose(f.column, options)];
      return [name, t.field({ ...options, resolve: (source: Source, _args: unknown, ctx: Context) => f.resolve!(source, ctx) })];
    }),
  ) as Record<string, never>;
}
