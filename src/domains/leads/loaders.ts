// Per-request batches behind the Lead fields. A lead's tags are read for a whole page in one statement
// that binds the lead ids as one array: Prisma's relation loading bound one parameter per lead-tag pair
// (100 leads × 700 tags passed PostgreSQL's 65,535 and made the page a permanent 500).
import DataLoader from 'dataloader';
import { Prisma, type Tag } from '../../generated/prisma/client.js';
import type { Context } from '../../context/context.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { tenantIs } from '../../tenant-sql.js';
import { defineLoader, groupByKey } from '../../context/loaders.js';

type TagOfLead = Tag & { lead_id: string };

/** The tags of each lead, by name, on any scoped client (a request's, or a transaction's). */
async function queryLeadTags(db: Pick<TenantTx, '$tenantQuery'>, ids: readonly string[]): Promise<Tag[][]> {
  const rows = await db.$tenantQuery<TagOfLead[]>(
    (tenant) => Prisma.sql`
    SELECT lt.lead_id, t.id, t.tenant_id, t.name, t.color, t.created_at, t.updated_at
    FROM lead_tags lt JOIN tags t ON t.tenant_id = lt.tenant_id AND t.id = lt.tag_id
    WHERE ${tenantIs(tenant, 'lt')} AND lt.lead_id = ANY(${[...ids]}::uuid[])
    ORDER BY t.name, t.id`,
  );
  return groupByKey(ids, rows, (r) => r.lead_id).map((tags) => tags.map(({ lead_id: _, ...tag }) => tag));
}

export const tagsByLead = defineLoader((ctx) => new DataLoader<string, Tag[]>((ids) => queryLeadTags(ctx.db, ids)));

/** A write's answer from what the write saw: the lead's tags read inside its transaction (under its lock). */
export async function settleLeadTags(ctx: Context, db: Pick<TenantTx, '$tenantQuery'>, id: string): Promise<void> {
  const [tags] = await queryLeadTags(db, [id]);
  tagsByLead(ctx).clear(id).prime(id, tags);
}
