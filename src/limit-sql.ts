// The LIMIT and OFFSET of a page's statement. Statements run prepared (db/direct.ts on PostgreSQL,
// db/pglite-prepared.mjs on PGlite), and PostgreSQL reuses a prepared statement's generic plan only
// when it costs no more than planning each execution anew. With `LIMIT $n` the generic plan must guess
// the page size (a tenth of the table), so it never won and every execution was planned again: about
// 1 ms of PGlite's 3.6 ms per deals page. The page size is written into the text (bounded by each
// list's maximum, so the texts stay few), and so is an offset that is bounded too (the first page's 0,
// a probe past a page); a later page's offset stays a parameter, or every page number would be a
// statement of its own.
import { Prisma } from './generated/prisma/client.js';

/**
 * `LIMIT <limit>`, then `OFFSET <offset>` in the text when `bounded` (by default only 0, which is
 * left out), else `OFFSET $n`. Both must be integers ≥ 0: they are checked before they become text.
 */
export function limitSql(limit: number, offset = 0, bounded = offset === 0): Prisma.Sql {
  if (!Number.isSafeInteger(limit) || limit < 0 || !Number.isSafeInteger(offset) || offset < 0)
    throw new Error(`limitSql: not a page window: ${limit}, ${offset}`);
  const head = `LIMIT ${limit}`;
  if (offset === 0) return Prisma.raw(head);
  return bounded ? Prisma.raw(`${head} OFFSET ${offset}`) : Prisma.sql`${Prisma.raw(head)} OFFSET ${offset}`;
}
