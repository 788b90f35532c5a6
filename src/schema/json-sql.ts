// Pieces shared by the fields PostgreSQL writes as JSON text (schema/json-fields.ts): the text must be
// byte for byte what the resolvers' answer serialises to. row_to_json writes no blanks (json_build_object
// and json_agg do), escapes strings as JSON.stringify does, embeds json values as they are, and writes
// uuids and enums as strings; timestamps are written as toISOString() prints them.
// (The deal card, domains/deals/card-json.ts, has its own copies of these; they are the same rules.)

/** A timestamptz column as Date.prototype.toISOString() writes it (millisecond columns). */
export const isoSql = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** Response keys are GraphQL names; checked anyway, as they are written into the SQL text. */
const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

/** A select list naming each expression by its response key; null if a key is not a GraphQL name. */
export function selectList(pairs: [string, string][]): string | null {
  if (!pairs.length || pairs.some(([key]) => !NAME.test(key))) return null;
  return pairs.map(([key, sql]) => `${sql} AS "${key}"`).join(', ');
}

/** A JSON object of already-serialised values, in this key order (the page's own envelope). */
export const jsonObject = (entries: [string, string][]) => `{${entries.map(([key, json]) => `${JSON.stringify(key)}:${json}`).join(',')}}`;
