// Reading, re-labelling, deleting and cleaning up uploads. A record exists exactly while its file does:
// deletes remove the record first (one statement that returns the file's key) and the file right after,
// so a failure in between leaves at worst a file without a record, which the start-up sweep removes
// (sweep.ts); never a record pointing at nothing.
import { requireTenant } from '../../auth/viewer.js';
import type { Context } from '../../context/context.js';
import { Prisma, type PrismaClient, type UploadStatus } from '../../generated/prisma/client.js';
import { notFound, invalidParameter } from '../../errors.js';
import { log } from '../../log.js';
import type { FileStorage } from '../../storage/storage.js';
import type { Selection } from '../common/types.js';
import { tenantIs } from '../../tenant-sql.js';

export const DEFAULT_CLEANUP_HOURS = 24;
/** Ten years: anything larger is a mistake, not a retention period. */
const MAX_CLEANUP_HOURS = 24 * 365 * 10;
/** Rows deleted per cleanup statement, so a large backlog never holds many locks at once. */
const CLEANUP_BATCH = 500;

const uploadNotFound = () => notFound('Upload');

export async function getUpload(ctx: Context, id: string, query: Selection = {}) {
  const upload = await ctx.db.upload.findUnique({ ...query, where: { id } });
  if (!upload) throw uploadNotFound();
  return upload;
}

/** The organisation's uploads in creation order. `tenantId` must be the caller's own organisation (else 404). */
export function listUploads(ctx: Context, tenantId: string | null | undefined, query: Selection = {}) {
  const viewer = requireTenant(ctx.viewer);
  if (tenantId != null && tenantId !== viewer.tenantId) throw notFound('Organização');
  return ctx.db.upload.findMany({ ...query, orderBy: [{ created_at: 'asc' }, { id: 'asc' }] });
}

export async function setUploadStatus(ctx: Context, id: string, status: UploadStatus, query: Selection = {}) {
  const { count } = await ctx.db.upload.updateMany({ where: { id }, data: { status } });
  if (count === 0) throw uploadNotFound();
  return ctx.db.upload.findUniqueOrThrow({ ...query, where: { id } });
}

export async function deleteUpload(ctx: Context, id: string): Promise<void> {
  const [deleted] = await ctx.db.$tenantQuery<{ storage_key: string }[]>(
    (tenant) => Prisma.sql`DELETE FROM uploads WHERE ${tenantIs(tenant)} AND id = ${id}::uuid RETURNING storage_key`,
  );
  if (!deleted) throw uploadNotFound();
  await removeFiles(ctx.storage, [deleted.storage_key]);
}

/** `POST /uploads/cleanup`: the organisation's PENDING uploads older than `hours` (owner/admin). */
export async function cleanupUploads(ctx: Context, hours: number | null | undefined): Promise<{ deleted_count: number }> {
  const h = cleanupHours(hours);
  const deleted_count = await deleteExpired(ctx.storage, (limit) =>
    ctx.db.$tenantQuery<{ storage_key: string }[]>((tenant) => expiredBatch(Prisma.sql`${tenantIs(tenant)} AND`, h, limit)),
  );
  return { deleted_count };
}

/**
 * Every organisation's PENDING uploads older than `hours`, records and files: what the scheduled cleanup
 * runs (hourly by default). Returns how many were removed.
 */
export function cleanupExpiredUploads(prisma: PrismaClient, storage: FileStorage, hours = DEFAULT_CLEANUP_HOURS): Promise<number> {
  const h = cleanupHours(hours);
  return deleteExpired(storage, (limit) => prisma.$queryRaw<{ storage_key: string }[]>(expiredBatch(Prisma.empty, h, limit)));
}

function cleanupHours(hours: number | null | undefined): number {
  if (hours == null) return DEFAULT_CLEANUP_HOURS;
  if (!Number.isInteger(hours) || hours < 0 || hours > MAX_CLEANUP_HOURS)
    throw invalidParameter('hours', `deve ser um inteiro entre 0 e ${MAX_CLEANUP_HOURS}`);
  return hours;
}

/**
 * Deletes up to `limit` expired PENDING uploads and returns their keys. The rows are locked as they are
 * chosen (SKIP LOCKED), so an upload being marked ASSOCIATED at that moment is either skipped or
 * re-labelled after it is gone (and then 404): a file is never removed while its record stays.
 */
function expiredBatch(tenantCondition: Prisma.Sql, hours: number, limit: number): Prisma.Sql {
  return Prisma.sql`
    DELETE FROM uploads WHERE (tenant_id, id) IN (
      SELECT tenant_id, id FROM uploads
      WHERE ${tenantCondition} status = 'PENDING' AND created_at < now() - make_interval(hours => ${hours}::int)
      ORDER BY created_at
      LIMIT ${limit}::int
      FOR UPDATE SKIP LOCKED
    )
    RETURNING storage_key`;
}

async function deleteExpired(storage: FileStorage, deleteBatch: (limit: number) => Promise<{ storage_key: string }[]>): Promise<number> {
  let total = 0;
  for (;;) {
    const rows = await deleteBatch(CLEANUP_BATCH);
    await removeFiles(
      storage,
      rows.map((r) => r.storage_key),
    );
    total += rows.length;
    if (rows.length < CLEANUP_BATCH) return total;
  }
}

/** Files whose records are gone. A file that cannot be removed now is an orphan for the start-up sweep. */
async function removeFiles(storage: FileStorage, keys: string[]): Promise<void> {
  for (const key of keys) {
    await storage.delete(key).catch((error) => log.error('could not remove the file of a deleted upload', { key, error: String(error) }));
  }
}
