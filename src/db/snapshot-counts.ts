// A page's total, counted again only when the data may have changed. A list's `total_count` counts
// every matching row (10,000 deals: about 1 ms of PGlite's thread per page, a third of its work), and
// most pages are read again before anything commits: the embedded server is one process, often idle
// between a user's clicks. The count is remembered with the snapshot it was taken under
// (`pg_current_snapshot()`): two statements whose snapshots are the same text see the same committed
// rows, so the statement skips the count when its own snapshot is the remembered one and answers
// with the count it was given. A statement whose transaction has written (`pg_current_xact_id_if_assigned`
// set) sees its own changes, which no snapshot shows: it always counts and is not remembered. On a busy
// PostgreSQL server the snapshot changes with every commit, so there the count simply runs, as before.
// Off (always counting) where one snapshot does not show every commit: a Citus coordinator's does not
// show what its workers commit (Database.oneSnapshot).
import { Prisma } from '../generated/prisma/client.js';

/** Remembered counts, least recently used dropped first. */
const MAX_ENTRIES = 1000;
/** A count whose statement and values are longer than this (a long search) is not remembered. */
const MAX_KEY_CHARS = 2000;

/** The two columns a counted statement returns. */
export interface CountColumns {
  total_count: number | null;
  count_snapshot: string | null;
}

/** The two columns of a statement that does not count (its caller asked for no total). */
export const NO_COUNT = Prisma.sql`NULL::int AS total_count, NULL::text AS count_snapshot`;

export interface SnapshotCount {
  /** `… AS total_count, … AS count_snapshot`, for a select list. */
  columns: Prisma.Sql;
  /** The count, from the row the statement returned. */
  read(row: CountColumns): number;
}

export class SnapshotCounts {
  private entries = new Map<string, { snapshot: string; count: number }>();

  /** `enabled`: false where one snapshot does not show every commit (Database.oneSnapshot): always count. */
  constructor(private readonly enabled = true) {}

  /** The columns of `SELECT count(*) …` (`count`, a statement that returns one integer). */
  count(count: Prisma.Sql): SnapshotCount {
    if (!this.enabled)
      return {
        columns: Prisma.sql`(${count})::int AS total_count, NULL::text AS count_snapshot`,
        read: (row) => Number(row.total_count ?? 0),
      };
    const key = `${count.sql}\n${JSON.stringify(count.values)}`;
    const remember = key.length <= MAX_KEY_CHARS;
    const known = remember ? this.entries.get(key) : undefined;
    const unwritten = Prisma.sql`pg_current_xact_id_if_assigned() IS NULL`;
    const columns = Prisma.sql`CASE WHEN ${unwritten} AND pg_current_snapshot()::text = ${known?.snapshot ?? ''}::text THEN NULL
        ELSE (${count})::int END AS total_count,
      CASE WHEN ${unwritten} THEN pg_current_snapshot()::text END AS count_snapshot`;
    return {
      columns,
      read: (row) => {
        if (row.total_count === null && known && row.count_snapshot === known.snapshot) {
          this.touch(key, known);
          return known.count;
        }
        const counted = Number(row.total_count ?? 0);
        if (remember && row.count_snapshot) this.touch(key, { snapshot: row.count_snapshot, count: counted });
        return counted;
      },
    };
  }

  private touch(key: string, entry: { snapshot: string; count: number }): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
  }
}
