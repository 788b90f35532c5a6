// Stage.deals: a cursor connection per board column. All columns asked for in one GraphQL request with
// the same arguments are read in one statement (a LATERAL join per stage over the stage index), and
// their totalCounts in one GROUP BY, only when selected.
import DataLoader from 'dataloader';
import { Prisma, type Deal } from '../../generated/prisma/client.js';
import { invalidInput } from '../../errors.js';
import type { Context } from '../../context/context.js';
import { defineLoader, groupByKey } from '../../context/loaders.js';
import { dealConditions, parseDealFilter, type DealFilterArgs } from './filters.js';
import { limitSql } from '../../limit-sql.js';

export interface StageDealsKey {
  stageId: string;
  pipelineId: string;
  args: DealFilterArgs;
  after?: string;
  before?: string;
  limit: number;
  inverted: boolean;
}

export function dealCursor(deal: Pick<Deal, 'created_at' | 'id'>): string {
  return Buffer.from(`${new Date(deal.created_at).toISOString()}|${deal.id}`).toString('base64url');
}

function decodeCursor(cursor: string): { at: Date; id: string } {
  const [at, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const date = new Date(at ?? '');
  if (!id || Number.isNaN(date.getTime()) || !/^[0-9a-f-]{36}$/i.test(id)) throw invalidInput('Cursor inválido');
  return { at: date, id };
}

export const stageDeals = defineLoader(
  (ctx) =>
    new DataLoader<StageDealsKey, Deal[], string>(
      async (keys) => {
        // Keys sharing everything but the stage run together.
        const groups = new Map<string, StageDealsKey[]>();
        for (const k of keys) {
          const sig = JSON.stringify([k.pipelineId, k.args, k.after, k.before, k.limit, k.inverted]);
          groups.set(sig, [...(groups.get(sig) ?? []), k]);
        }
        const rows: (Deal & { _stage: string })[] = [];
        for (const group of groups.values()) rows.push(...(await loadGroup(ctx, group)));
        return groupByKey(
          keys.map((k) => `${k.stageId}|${keyOf(k)}`),
          rows,
          (r) => r._stage,
        );
      },
      { cacheKeyFn: (k) => `${k.stageId}|${keyOf(k)}` },
    ),
);

const keyOf = (k: StageDealsKey) => JSON.stringify([k.pipelineId, k.args, k.after, k.before, k.limit, k.inverted]);

async function loadGroup(ctx: Context, group: StageDealsKey[]) {
  const first = group[0];
  const filter = parseDealFilter(first.pipelineId, { ...first.args, stage_id: undefined });
  // The newest-first order of `recent`, or its reverse; `inverted` (last/before) reads backwards.
  const descending = (filter.sort === 'recent') !== first.inverted;
  const conds: Prisma.Sql[] = [Prisma.sql`d.stage_id = s.id`];
  for (const [cursor, isAfter] of [
    [first.after, true],
    [first.before, false],
  ] as const) {
    if (!cursor) continue;
    const c = decodeCursor(cursor);
    // "after" in the connection's order is "further along" the read direction.
    const forward = isAfter ? filter.sort === 'recent' : filter.sort !== 'recent';
    conds.push(
      forward
        ? Prisma.sql`(d.created_at, d.id) < (${c.at}::timestamptz, ${c.id}::uuid)`
        : Prisma.sql`(d.created_at, d.id) > (${c.at}::timestamptz, ${c.id}::uuid)`,
    );
  }
  const order = descending ? Prisma.sql`d.created_at DESC, d.id DESC` : Prisma.sql`d.created_at ASC, d.id ASC`;
  const stageIds = Prisma.join(group.map((k) => Prisma.sql`${k.stageId}::uuid`));
  const rows = await ctx.db.$tenantQuery<(Deal & { _stage: string })[]>(
    (tenant) => Prisma.sql`
    SELECT x.* FROM (SELECT unnest(ARRAY[${stageIds}]) AS id) s
    CROSS JOIN LATERAL (
      SELECT d.*, s.id::text AS _stage_id FROM deals d WHERE ${dealConditions(tenant, filter, false)} AND ${Prisma.join(conds, ' AND ')}
      ORDER BY ${order} ${limitSql(first.limit)}
    ) x`,
  );
  const sigKey = keyOf(first);
  return rows.map((r) => {
    const { _stage_id, ...deal } = r as unknown as Deal & { _stage_id: string };
    return { ...deal, _stage: `${_stage_id}|${sigKey}` } as Deal & { _stage: string };
  });
}

export interface StageCountKey {
  stageId: string;
  pipelineId: string;
  args: DealFilterArgs;
}

const countKeyOf = (k: StageCountKey) => `${k.stageId}|${JSON.stringify([k.pipelineId, k.args])}`;

/** Deals per stage under the filters: one statement per pipeline and filter set. */
export const stageDealCounts = defineLoader(
  (ctx) =>
    new DataLoader<StageCountKey, number, string>(
      async (keys) => {
        const groups = new Map<string, StageCountKey[]>();
        for (const k of keys) {
          const sig = JSON.stringify([k.pipelineId, k.args]);
          groups.set(sig, [...(groups.get(sig) ?? []), k]);
        }
        const counts = new Map<string, number>();
        for (const group of groups.values()) {
          const first = group[0];
          const filter = parseDealFilter(first.pipelineId, { ...first.args, stage_id: undefined });
          const stageIds = Prisma.join(group.map((k) => Prisma.sql`${k.stageId}::uuid`));
          const rows = await ctx.db.$tenantQuery<{ stage_id: string; n: number }[]>(
            (tenant) => Prisma.sql`
            SELECT d.stage_id::text AS stage_id, count(*)::int AS n FROM deals d
            WHERE ${dealConditions(tenant, filter, false)} AND d.stage_id IN (${stageIds})
            GROUP BY d.stage_id`,
          );
          for (const r of rows) counts.set(countKeyOf({ ...first, stageId: r.stage_id }), Number(r.n));
        }
        return keys.map((k) => counts.get(countKeyOf(k)) ?? 0);
      },
      { cacheKeyFn: countKeyOf },
    ),
);

export type CountedConnection = { totalCount: () => Promise<number> };

/** A page with its total (counted only when asked for) and, when it is empty, null cursors. */
export function withTotalCount<
  C extends { edges: readonly unknown[]; pageInfo: { startCursor?: string | null; endCursor?: string | null } },
>(connection: C, totalCount: () => Promise<number>): C & CountedConnection {
  const pageInfo = connection.edges.length ? connection.pageInfo : { ...connection.pageInfo, startCursor: null, endCursor: null };
  return { ...connection, pageInfo: pageInfo as C['pageInfo'], totalCount };
}
