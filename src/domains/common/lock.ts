// Row locks that serialise the writes to one record ("replace the whole list" writes, decisions.md):
// the second writer waits at the lock until the first commits, then reads what it left, so the last
// writer wins whole. Raw SQL is not scoped by the tenant extension: the tenant condition is written here.
import { Prisma } from '../../generated/prisma/client.js';
import type { TenantDb } from '../../db/tenant-scope.js';

/** Tables whose rows a write may lock (fixed names: they are spliced into the statement). */
type LockableTable = 'deals' | 'leads';

/** A transaction that may wait for another holding the same row lock needs more than Prisma's 5 s default. */
export const LOCKING_TX = { maxWait: 15_000, timeout: 30_000 };

/** Locks the organisation's row `id` of `table` until the transaction ends (no row: nothing to lock). */
export async function lockRow(db: TenantDb, table: LockableTable, tenantId: string, id: string): Promise<void> {
  await db.$queryRaw`SELECT id::text AS id FROM ${Prisma.raw(table)} WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
}
