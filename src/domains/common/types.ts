// Small shapes shared by several domains.
import { builder } from '../../schema/builder.js';

export const Success = builder.objectRef<{ success: true }>('Success').implement({
  description: 'Acknowledges an operation that returns no resource.',
  fields: (t) => ({ success: t.exposeBoolean('success') }),
});

export const OffsetPagination = builder
  .objectRef<{ total: number; limit: number; offset: number; has_more: boolean }>('OffsetPagination')
  .implement({
    description: 'Offset pagination of envelope-style lists.',
    fields: (t) => ({
      total: t.exposeInt('total', { description: 'Items matching the filters.' }),
      limit: t.exposeInt('limit'),
      offset: t.exposeInt('offset'),
      has_more: t.exposeBoolean('has_more'),
    }),
  });

export const SyncPagination = builder
  .objectRef<{ total: number; limit: number; offset: number; has_more: boolean; next_cursor: string | null }>('SyncPagination')
  .implement({
    description:
      'Offset pagination of a list that also syncs: with `updated_since` or `cursor`, the counts cover the rows from this page on and `next_cursor` leads to the next page.',
    fields: (t) => ({
      total: t.exposeInt('total', { description: 'Items matching the filters (in a sync: from this page on).' }),
      limit: t.exposeInt('limit'),
      offset: t.exposeInt('offset', { description: '0 in a sync.' }),
      has_more: t.exposeBoolean('has_more'),
      next_cursor: t.exposeString('next_cursor', {
        nullable: true,
        description: 'Sync: the `cursor` of the next page; null on the last page and outside a sync.',
      }),
    }),
  });

export const SUCCESS = { success: true } as const;

/** The selection Pothos plans for a prismaField (include/select), spread into the service's query. */
export type Selection = Record<string, unknown>;

/** limit/offset with the API's defaults: limit 1..max (default 20), offset ≥ 0. */
export function offsetWindow(limit: number | null | undefined, offset: number | null | undefined, max = 100) {
  const l = limit == null || limit < 1 || limit > max ? 20 : limit;
  const o = offset == null || offset < 0 ? 0 : offset;
  return { limit: l, offset: o };
}

export function offsetPagination(total: number, window: { limit: number; offset: number }) {
  return { total, limit: window.limit, offset: window.offset, has_more: window.offset + window.limit < total };
}
