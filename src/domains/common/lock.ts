// Row locks that serialise the writes to one record ("replace the whole list" writes, decisions.md):
// the second writer waits at the lock until the first commits, then reads what it left, so the last
// writer wins whole.
import { Prisma } from '../../generated/prisma/client.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { tenantIs } from '../../tenant-sql.js';

/** Tables whose rows a write may lock (fixed names: they are spliced into the statement). */
type LockableTable = 'deals' | 'departments' | 'leads' | 'pipelines';

/** A transaction that may wait for another holding the same row lock needs more than Prisma's 5 s default. */
export const LOCKING_TX = { maxWait: 15_000, timeout: 30_000 };

/** Locks the organisation's row `id` of `table` until the transaction ends; false when there is no such row. */
export async function lockRow(db: TenantTx, table: LockableTable, id: string): Promise<boolean> {
  const rows = await db.$tenantQuery<{ id: string }[]>(
    (tenant) => Prisma.sql`SELECT id::text AS id FROM ${Prisma.raw(table)} WHERE id = ${id}::uuid AND ${tenantIs(tenant)} FOR UPDATE`,
  );
  return rows.length > 0;
}
