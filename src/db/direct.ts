// The `pg` pool as a query runner beside Prisma, for the few statements every request runs (the API
// key lookup, the deals list): a raw query through Prisma's driver adapter costs several times the
// Node CPU of the same query on `pg` (argument mapping, result conversion to Prisma types). PostgreSQL
// only; counted like Prisma's statements.
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

export function directSql(pool: pg.Pool): DirectSql {
  return {
    async query<R>(text: string, values: readonly unknown[]) {
      countStatement(text);
      return (await pool.query(text, values as unknown[])).rows as R[];
    },
  };
}
