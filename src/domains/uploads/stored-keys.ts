// The statements over every table that keeps storage keys: the columns each domain declares in its
// manifest (`storedFiles`, storage/stored-file-columns.ts; today uploads' `storage_key` and messaging's
// `messages.media_key`). The start-up sweep (sweep.ts) must never remove a file one of them records, and
// the public media proxy serves exactly the files they record.
import type { DirectSql } from '../../db/direct.js';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { storedFileColumns } from '../../storage/stored-file-columns.js';

/** Which of `keys` a record holds (of any organisation). */
export async function recordedKeys(prisma: PrismaClient, keys: string[]): Promise<Set<string>> {
  if (!keys.length) return new Set();
  const list = Prisma.join(keys);
  const selects = storedFileColumns().map(
    ({ table, key }) => Prisma.sql`SELECT ${Prisma.raw(key)} AS key FROM ${Prisma.raw(table)} WHERE ${Prisma.raw(key)} IN (${list})`,
  );
  const rows = await prisma.$queryRaw<{ key: string }[]>(Prisma.join(selects, ' UNION ALL '));
  return new Set(rows.map((r) => r.key));
}

let contentTypeSql: string | undefined;

/** Built on first use, once the domains have registered their columns. */
const contentTypeStatement = () =>
  (contentTypeSql ??=
    storedFileColumns()
      .map(
        ({ table, key, contentType }) =>
          `SELECT ${contentType} AS mime_type FROM ${table} WHERE ${key} = $1 AND ${contentType} IS NOT NULL`,
      )
      .join(' UNION ALL ') + ' LIMIT 1');

/**
 * The content type recorded with a stored file, or null when no record holds its key. One statement;
 * on PostgreSQL through `direct` (db/direct.ts: the media proxy runs it on every request, and Prisma's
 * raw path cost more CPU than the rest of the proxy's work).
 */
export async function recordedContentType(prisma: PrismaClient, key: string, direct?: DirectSql): Promise<string | null> {
  const [row] = direct
    ? await direct.query<{ mime_type: string }>(contentTypeStatement(), [key])
    : await prisma.$queryRawUnsafe<{ mime_type: string }[]>(contentTypeStatement(), key);
  return row?.mime_type ?? null;
}
