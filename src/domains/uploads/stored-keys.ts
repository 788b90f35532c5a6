// Every table that keeps storage keys, in one place. The start-up sweep (sweep.ts) must never remove a
// file one of them records, and the public media proxy serves exactly the files they record. Today:
// uploads (`storage_key`) and messaging's media messages (`messages.media_key`). A domain that stores
// files in the same storage adds its table to both statements here.
import type { DirectSql } from '../../db/direct.js';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';

/** Which of `keys` a record holds (of any organisation). */
export async function recordedKeys(prisma: PrismaClient, keys: string[]): Promise<Set<string>> {
  if (!keys.length) return new Set();
  const list = Prisma.join(keys);
  const rows = await prisma.$queryRaw<{ key: string }[]>`
    SELECT storage_key AS key FROM uploads WHERE storage_key IN (${list})
    UNION ALL
    SELECT media_key AS key FROM messages WHERE media_key IN (${list})`;
  return new Set(rows.map((r) => r.key));
}

const CONTENT_TYPE_SQL = `SELECT mime_type FROM uploads WHERE storage_key = $1
  UNION ALL
  SELECT media_mime_type FROM messages WHERE media_key = $1 AND media_mime_type IS NOT NULL
  LIMIT 1`;

/**
 * The content type recorded with a stored file, or null when no record holds its key. One statement;
 * on PostgreSQL through `direct` (db/direct.ts: the media proxy runs it on every request, and Prisma's
 * raw path cost more CPU than the rest of the proxy's work).
 */
export async function recordedContentType(prisma: PrismaClient, key: string, direct?: DirectSql): Promise<string | null> {
  const [row] = direct
    ? await direct.query<{ mime_type: string }>(CONTENT_TYPE_SQL, [key])
    : await prisma.$queryRawUnsafe<{ mime_type: string }[]>(CONTENT_TYPE_SQL, key);
  return row?.mime_type ?? null;
}
