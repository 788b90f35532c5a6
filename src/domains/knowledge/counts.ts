// How many items each assistant sees (Assistant.knowledge's totalCount): the assistants of one request
// counted in one statement, the same rule as scope.ts's `visibleTo` (its exclusive items, and the
// global ones it is not excluded from).
import DataLoader from 'dataloader';
import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';
import { Prisma } from '../../generated/prisma/client.js';
import type { Context } from '../../context/context.js';
import { defineLoader } from '../../context/loaders.js';
import { tenantIs } from '../../tenant-sql.js';

export const visibleItemCounts = defineLoader(
  (ctx) =>
    new DataLoader<string, number>(async (ids) => {
      const rows = await ctx.db.$tenantQuery<{ id: string; n: number }[]>(
        (tenant) => Prisma.sql`
        SELECT a.id::text AS id, count(k.id)::int AS n
        FROM unnest(${[...ids]}::uuid[]) AS a(id)
        JOIN knowledge_items k ON ${tenantIs(tenant, 'k')} AND (
          k.assistant_id = a.id
          OR (k.assistant_id IS NULL AND NOT EXISTS (
            SELECT 1 FROM knowledge_exclusions e WHERE ${tenantIs(tenant, 'e')} AND e.item_id = k.id AND e.assistant_id = a.id)))
        GROUP BY a.id`,
      );
      const counts = new Map(rows.map((r) => [r.id, Number(r.n)]));
      return ids.map((id) => counts.get(id.toLowerCase()) ?? 0);
    }),
);

/**
 * Asks for the assistant's count when the connection resolves, if `totalCount` is selected: every
 * assistant of the list resolves its connection in the same tick, so their counts share one statement
 * (the count field itself resolves later, after each assistant's own page was read).
 */
export function countIfSelected(ctx: Context, assistantId: string, info: GraphQLResolveInfo): void {
  if (info.fieldNodes.some((node) => selects(node.selectionSet, 'totalCount', info)))
    void visibleItemCounts(ctx)
      .load(assistantId)
      .catch(() => undefined);
}

function selects(set: SelectionSetNode | undefined, name: string, info: GraphQLResolveInfo): boolean {
  return !!set?.selections.some((s) => {
    if (s.kind === Kind.FIELD) return s.name.value === name;
    if (s.kind === Kind.INLINE_FRAGMENT) return selects(s.selectionSet, name, info);
    return selects(info.fragments[s.name.value]?.selectionSet, name, info);
  });
}
