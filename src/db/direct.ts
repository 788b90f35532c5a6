// The `pg` pool as a query runner beside Prisma, for the few statements every request runs (the API
// key lookup, the deals list): a raw query through Prisma's driver adapter costs several times the
// Node CPU of the same query on `pg` (argument mapping, result conversion to Prisma types). PostgreSQL
// only; counted like Prisma's statements.
//
// Statements run as named prepared statements, so each connection parses and plans a statement text
// once (the deals list's planning is about a fifth of its database time). Texts depend on filters and
// on GraphQL selections, which clients choose: only the first MAX_PREPARED distinct texts of the
// process are prepared (each holds a plan on every connection), later ones run unnamed.
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { countStatement } from './statements.js';

export interface DirectSql {
  /**
   * Rows as `pg` parses them: int4, float8 and bool as numbers and booleans, text and uuid as strings,
   * timestamptz as Date, arrays as arrays; numeric and int8 as strings, json parsed (cast what the
   * caller wants otherwise, e.g. `::text`). Values: strings, numbers, booleans, Dates, arrays of them;
   * a long string is best bound as `$n::text` (BYTES_PAST_CHARS).
   */
  query<R>(text: string, values: readonly unknown[]): Promise<R[]>;
}

const MAX_PREPARED = 64;

/**
 * A string longer than this bound to a `$n::text` parameter travels as its UTF-8 bytes (binary format,
 * which PostgreSQL reads for text as the same text). `pg` writes a string parameter into its message
 * slowly, on the event loop: 8 ms for a knowledge file's 1.7 MB text on this machine, against 1.8 ms
 * encoded first. Only where the statement casts the parameter to text: other types' binary forms differ.
 */
const BYTES_PAST_CHARS = 64 * 1024;
const textParamsOf = new Map<string, Set<number>>();

function withLongTextAsBytes(text: string, values: readonly unknown[]): unknown[] {
  if (!values.some((v) => typeof v === 'string' && v.length > BYTES_PAST_CHARS)) return values as unknown[];
  let params = textParamsOf.get(text);
  if (!params) {
    params = new Set([...text.matchAll(/\$(\d+)::text\b/g)].map((m) => Number(m[1]) - 1));
    if (textParamsOf.size < MAX_PREPARED) textParamsOf.set(text, params);
  }
  const cast = params;
  return values.map((v, i) => (typeof v === 'string' && v.length > BYTES_PAST_CHARS && cast.has(i) ? Buffer.from(v) : v));
}

export function directSql(pool: pg.Pool): DirectSql {
  const names = new Map<string, string>();
  const nameOf = (text: string) => {
    let name = names.get(text);
    if (!name && names.size < MAX_PREPARED)
      names.set(text, (name = `funil_${createHash('sha256').update(text).digest('base64url').slice(0, 20)}`));
    return name;
  };
  return {
    async query<R>(text: string, values: readonly unknown[]) {
      countStatement(text);
      return (await pool.query({ name: nameOf(text), text, values: withLongTextAsBytes(text, values) })).rows as R[];
    },
  };
}
