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
   * caller wants otherwise, e.g. `::text`). Values: strings, numbers, booleans, Dates, arrays of them.
   */
  query<R>(text: string, values: readonly unknown[]): Promise<R[]>;
}

const MAX_PREPARED = 64;

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
      return (await pool.query({ name: nameOf(text), text, values: values as unknown[] })).rows as R[];
    },
  };
}
