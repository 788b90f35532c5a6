// Pieces shared by the fields PostgreSQL writes as JSON text (schema/json-fields.ts): the text must be
// byte for byte what the resolvers' answer serialises to. row_to_json writes no blanks (json_build_object
// and json_agg do), escapes strings as JSON.stringify does, embeds json values as they are, and writes
// uuids and enums as strings; timestamps are written as toISOString() prints them.
import { Prisma } from '../generated/prisma/client.js';
import type { SelectedField } from './json-fields.js';

/** A timestamptz column as Date.prototype.toISOString() writes it (millisecond columns). */
export const isoSql = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** Response keys are GraphQL names; checked anyway, as they are written into the SQL text. */
const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

/** A select list naming each expression by its response key; null if a key is not a GraphQL name. */
export function selectList(pairs: [string, string][]): string | null {
  if (!pairs.length || pairs.some(([key]) => !NAME.test(key))) return null;
  return pairs.map(([key, sql]) => `${sql} AS "${key}"`).join(', ');
}

/** The select list of an object's sub-selection from its field map; null when it asks for another field. */
export function objectSelect(sub: readonly SelectedField[] | null, fields: Record<string, string>): string | null {
  if (!sub?.length || sub.some((s) => !Object.hasOwn(fields, s.name))) return null;
  return selectList(sub.map((s) => [s.key, fields[s.name]]));
}

/** The JSON array text of the row expressions `rows` in `order`: string_agg, as json_agg writes blanks. */
export const jsonArraySql = (rows: string, order: string) => `'[' || COALESCE(string_agg(${rows}::text, ',' ORDER BY ${order}), '') || ']'`;

/**
 * The JSON array text of the rows of `from` (a FROM list: a page and what it joins), each the object of
 * the select list `columns`, in `order`.
 */
export const jsonRowsSql = (from: Prisma.Sql, columns: string, order: string) =>
  Prisma.sql`(SELECT ${Prisma.raw(jsonArraySql('row_to_json(card)', order))} FROM ${from} CROSS JOIN LATERAL (SELECT ${Prisma.raw(columns)}) card)`;

/** A JSON object of already-serialised values, in this key order (the page's own envelope). */
export const jsonObject = (entries: [string, string][]) => `{${entries.map(([key, json]) => `${JSON.stringify(key)}:${json}`).join(',')}}`;
