// Dense positions and the locks that keep them dense.
//
// Ordering invariants, kept at every commit:
// - groups of an organisation have positions 0..n-1, and so do the pipelines of each group: every write
//   that changes that layout first takes the organisation's layout lock (a transaction-level advisory lock);
// - the stages of a pipeline have positions 0..n-1: every write to a pipeline's stages first locks the
//   pipeline row (SELECT … FOR UPDATE), so concurrent saves of the same pipeline run one after the other.
import { Prisma } from '../../generated/prisma/client.js';
import { invalidField } from '../../errors.js';
import type { Context } from '../../context/context.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { lockRow } from '../common/lock.js';

/** Configuration writes may wait for a lock held by a concurrent save of the same pipeline. */
const TX = { maxWait: 15_000, timeout: 30_000 };

/** Runs a configuration change in one transaction. */
export function configTransaction<T>(ctx: Context, work: (db: TenantTx) => Promise<T>): Promise<T> {
  return ctx.db.$transaction((tx) => work(tx), TX);
}

/** A configuration transaction that first takes the organisation's layout lock. */
export function layoutTransaction<T>(ctx: Context, work: (db: TenantTx) => Promise<T>): Promise<T> {
  return configTransaction(ctx, async (db) => {
    await lockLayout(db);
    return work(db);
  });
}

/** Serialises changes to the organisation's layout of groups and pipelines (their positions). */
async function lockLayout(db: TenantTx) {
  await db.$tenantQuery(
    (tenant) => Prisma.sql`SELECT pg_advisory_xact_lock(hashtext('funil.pipeline_layout:' || ${tenant}::text))::text AS locked`,
  );
}

/** Locks the pipeline row for the rest of the transaction; false when it is not the organisation's. */
export function lockPipeline(db: TenantTx, pipelineId: string): Promise<boolean> {
  return lockRow(db, 'pipelines', pipelineId);
}

// ---------------------------------------------------------------------------------------------------
// Reading in order, writing 0..n-1

/** Stored order; ties (never expected) break by age, then id, so a compaction is deterministic. */
export const BY_POSITION: [{ position: 'asc' }, { created_at: 'asc' }, { id: 'asc' }] = [
  { position: 'asc' },
  { created_at: 'asc' },
  { id: 'asc' },
];

export interface Ordered {
  id: string;
  position: number;
}

type Positioned = 'pipelineGroup' | 'pipeline' | 'stage';
type PositionWriter = { update(args: { where: { id: string }; data: { position: number }; select: { id: true } }): Promise<unknown> };

/** Gives each row its index in `ordered` as position, writing only the rows whose position changes. */
export async function writePositions(db: TenantTx, model: Positioned, ordered: Ordered[]) {
  const rows = db[model] as unknown as PositionWriter;
  for (const [i, row] of ordered.entries())
    if (row.position !== i) await rows.update({ where: { id: row.id }, data: { position: i }, select: { id: true } });
}

/** `others` with the row `id` inserted at index `at`; position -1 makes sure the row is written. */
export function placeAt(others: Ordered[], at: number, id: string): Ordered[] {
  const order = [...others];
  order.splice(at, 0, { id, position: -1 });
  return order;
}

/** `rows` with `id` moved to index `to`, which must be 0..n-1 (400 otherwise). */
export function moveTo(rows: Ordered[], id: string, to: number): Ordered[] {
  if (to > rows.length - 1) throw invalidField('position', `deve estar entre 0 e ${rows.length - 1}`);
  return placeAt(
    rows.filter((r) => r.id !== id),
    to,
    id,
  );
}

export function stagesInOrder(db: TenantTx, pipelineId: string) {
  return db.stage.findMany({
    where: { pipeline_id: pipelineId },
    orderBy: BY_POSITION,
    select: { id: true, position: true, kind: true, name: true },
  });
}

export function pipelinesInOrder(db: TenantTx, groupId: string, exceptId?: string) {
  return db.pipeline.findMany({
    where: { group_id: groupId, ...(exceptId ? { id: { not: exceptId } } : {}) },
    orderBy: BY_POSITION,
    select: { id: true, position: true },
  });
}

/** Closes the gaps in a group's pipelines (after one left it). */
export async function compactPipelines(db: TenantTx, groupId: string) {
  await writePositions(db, 'pipeline', await pipelinesInOrder(db, groupId));
}

/** Closes the gaps in the organisation's groups; answers them in their new order. */
export async function compactGroups(db: TenantTx) {
  const groups = await db.pipelineGroup.findMany({ orderBy: BY_POSITION, select: { id: true, position: true } });
  await writePositions(db, 'pipelineGroup', groups);
  return groups;
}
