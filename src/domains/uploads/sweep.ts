// The start-up sweep of storage: files without a record (a process that died between storing a file and
// writing its record, or between deleting a record and its file; an organisation deleted with its
// records) and partial files of uploads that never finished. Only files older than a grace period are
// touched: another process sharing the directory may be between storing a file and recording it.
//
// A file is recorded when any table that keeps storage keys holds it (stored-keys.ts: the columns the
// domains declare in their manifests' `storedFiles`).
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { FileStorage } from '../../storage/storage.js';
import { recordedKeys } from './stored-keys.js';

export const SWEEP_GRACE_MS = 10 * 60_000;
const BATCH = 500;

export async function sweepOrphanFiles(
  prisma: PrismaClient,
  storage: FileStorage,
  { graceMs = SWEEP_GRACE_MS } = {},
): Promise<{ orphans: number; partials: number }> {
  const before = new Date(Date.now() - graceMs);
  const partials = await storage.removeStalePartials(before);
  let orphans = 0;
  let batch: string[] = [];
  const removeUnrecorded = async () => {
    const recorded = await recordedKeys(prisma, batch);
    for (const key of batch) if (!recorded.has(key) && (await storage.delete(key))) orphans++;
    batch = [];
  };
  for await (const { key, mtime } of storage.list()) {
    if (mtime >= before) continue;
    batch.push(key);
    if (batch.length === BATCH) await removeUnrecorded();
  }
  if (batch.length) await removeUnrecorded();
  return { orphans, partials };
}
