import { builder } from '../../schema/builder.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { SyncPagination, offsetPagination } from '../common/types.js';
import { syncWhere, type SyncedPage } from '../common/sync.js';
import type { Lead as LeadRow, Tag as TagRow } from '../../generated/prisma/client.js';
import { isoSql } from '../../schema/json-sql.js';
import { pothosFields, type SqlFields } from '../../schema/sql-fields.js';
import { MAX_TAGS } from './limits.js';
import { tagsByLead } from './loaders.js';
import { firstOfCapArg, listCap, takeOfFirst } from '../../schema/list-bounds.js';

/** Tag fields, each with its SQL over `t` (tags) for the JSON path (a deal's tags: deals/card.ts). */
export const TAG_FIELDS: SqlFields<TagRow> = {
  id: { type: 'UUID', column: 'id', sql: 't.id' },
  name: { type: 'String', column: 'name', sql: 't.name' },
  color: { type: 'String', column: 'color', description: 'Hexadecimal color, e.g. #22c55e.', sql: 't.color' },
  created_at: { type: 'DateTime', column: 'created_at', sql: isoSql('t.created_at') },
  updated_at: { type: 'DateTime', column: 'updated_at', sql: isoSql('t.updated_at') },
};

export const Tag = builder.prismaObject('Tag', {
  description: 'A label for leads and deals: one catalog per organisation.',
  fields: (t) => pothosFields(t, TAG_FIELDS),
});

export const LeadStatus = builder.prismaObject('LeadStatus', {
  description: 'A stage of a lead’s life cycle, defined by the organisation.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    name: t.exposeString('name'),
    color: t.exposeString('color', { description: 'Hexadecimal color, e.g. #3b82f6.' }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    updated_at: t.expose('updated_at', { type: 'DateTime' }),
  }),
});

export const Lead = builder.prismaObject('Lead', {
  description: 'A contact. Deals point to leads and read contact data from them at read time.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    name: t.exposeString('name'),
    surname: t.exposeString('surname', { nullable: true }),
    phone: t.exposeString('phone', {
      nullable: true,
      description:
        'E.164: + and 8 to 15 digits, unique in the organisation; Brazilian mobiles with their ninth digit. Null on a lead created by an inbound WhatsApp message that carried no phone.',
    }),
    whatsapp_user_id: t.exposeString('whatsapp_user_id', {
      nullable: true,
      description: 'Meta’s business-scoped WhatsApp user id (BSUID, e.g. BR.1502576394655843), unique in the organisation.',
    }),
    whatsapp_username: t.exposeString('whatsapp_username', {
      nullable: true,
      description:
        'The WhatsApp username the customer chose, as the last inbound message without one on the lead carried it; display only.',
    }),
    email: t.exposeString('email', { nullable: true }),
    company: t.exposeString('company', { nullable: true }),
    avatar_url: t.exposeString('avatar_url', { nullable: true }),
    status: t.relation('status', { nullable: true, description: 'The lead’s status, if any.' }),
    tags: t.field({
      type: [Tag],
      description: `Tags on the lead, by name (at most ${MAX_TAGS}).`,
      args: firstOfCapArg(MAX_TAGS),
      extensions: listCap(MAX_TAGS, 'lead_tags.lead_id'),
      resolve: async (lead, args, ctx) => (await tagsByLead(ctx).load(lead.id)).slice(0, takeOfFirst(args.first, MAX_TAGS)),
    }),
    custom_fields: t.field({
      type: 'JSONObject',
      description: 'Organisation-defined field values.',
      select: { custom_fields: true },
      resolve: (lead) => (lead.custom_fields ?? {}) as Record<string, unknown>,
    }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    updated_at: t.expose('updated_at', { type: 'DateTime' }),
  }),
});

/** A page of leads: `data` runs with the selection Pothos plans, so relations load in batches. */
export interface LeadPageSource {
  where: Prisma.LeadWhereInput;
  limit: number;
  offset: number;
  /** A sync page (`updated_since`/`cursor`): rows by (updated_at, id). */
  sync?: SyncedPage<LeadRow>;
}

export const LeadPage = builder.objectRef<LeadPageSource>('LeadPage').implement({
  description: 'A page of leads.',
  fields: (t) => ({
    data: t.prismaField({
      type: [Lead],
      resolve: (query, page, _args, ctx) =>
        page.sync
          ? page.sync.rows(query)
          : ctx.db.lead.findMany({
              ...query,
              where: page.where,
              orderBy: [{ created_at: 'desc' }, { id: 'desc' }],
              skip: page.offset,
              take: page.limit,
            }),
    }),
    pagination: t.field({
      type: SyncPagination,
      resolve: async (page, _args, ctx) => {
        if (!page.sync) return { ...offsetPagination(await ctx.db.lead.count({ where: page.where }), page), next_cursor: null };
        const [total, next] = await Promise.all([
          ctx.db.lead.count({ where: { AND: [page.where, syncWhere(page.sync.window)] } }),
          page.sync.next(),
        ]);
        return { total, limit: page.limit, offset: 0, has_more: next != null, next_cursor: next };
      },
    }),
  }),
});
