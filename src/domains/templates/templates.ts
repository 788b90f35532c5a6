// Reading and deleting synchronised templates. Operators read; owner/admin delete.
import { syncedArray, withSyncKeys, SYNC_ORDER, type SyncArrayArgs } from '../common/sync.js';
import type { Prisma, TemplateCategory, TemplateStatus } from '../../generated/prisma/client.js';
import { notFound } from '../../errors.js';
import type { Context } from '../../context/context.js';
import type { Selection } from '../common/types.js';

export interface TemplateFilters {
  provider_app_id?: string | null;
  status?: TemplateStatus | null;
  category?: TemplateCategory | null;
  language?: string | null;
}

/** Templates matching every given filter, by name and language. Each filter has its index. */
export function listTemplates(ctx: Context, filters: TemplateFilters & SyncArrayArgs, query: Selection = {}) {
  const where: Prisma.TemplateWhereInput = {};
  if (filters.provider_app_id != null) where.provider_app_id = filters.provider_app_id;
  if (filters.status != null) where.status = filters.status;
  if (filters.category != null) where.category = filters.category;
  if (filters.language != null) where.language = filters.language;
  return syncedArray(
    ctx,
    'templates',
    filters,
    () => ctx.db.template.findMany({ ...query, where, orderBy: [{ template_name: 'asc' }, { language: 'asc' }, { id: 'asc' }] }),
    (sync, take) =>
      ctx.db.template.findMany({
        ...withSyncKeys(query),
        where: { AND: [where, sync as Prisma.TemplateWhereInput] },
        orderBy: SYNC_ORDER,
        take,
      }),
  );
}

export async function getTemplate(ctx: Context, id: string, query: Selection = {}) {
  const template = await ctx.db.template.findUnique({ ...query, where: { id } });
  if (!template) throw notFound('Modelo');
  return template;
}

/** Deletes a template; its cadence associations go with it (the foreign key cascades, in the same statement). */
export async function deleteTemplate(ctx: Context, id: string) {
  const { count } = await ctx.db.template.deleteMany({ where: { id } });
  if (count === 0) throw notFound('Modelo');
}
