import { idArg } from '../common/args.js';
import { syncArgs, syncArrayArgs } from '../common/sync.js';
import { builder } from '../../schema/builder.js';
import { listCount } from '../../schema/list-bounds.js';
import { SUCCESS, Success } from '../common/types.js';
import { Lead, LeadPage, LeadStatus, Tag } from './types.js';
import * as leads from './service.js';
import { mergeLeads } from './merge.js';

const leadArgs = (create: boolean) =>
  builder.args((t) => ({
    name: t.string({ required: create, description: 'Required on create.' }),
    surname: t.string(),
    phone: t.string({
      required: create,
      description: 'E.164 with country code, e.g. +5511999998888 (a Brazilian mobile without its ninth digit gets it).',
    }),
    whatsapp_user_id: t.string({ description: 'Meta’s business-scoped WhatsApp user id (BSUID); null removes it.' }),
    email: t.string(),
    company: t.string(),
    avatar_url: t.string(),
    status_id: t.field({ type: 'UUID', description: 'A lead status of the organisation.' }),
    tag_ids: t.field({ type: ['UUID'], description: create ? 'Tags to attach.' : 'Replaces the lead’s tags; [] removes all.' }),
    custom_fields: t.field({ type: 'JSONObject', description: 'Custom field values.' }),
  }));

builder.queryField('leads', (t) =>
  t.field({
    type: LeadPage,
    description:
      'Leads, newest first; with `updated_since` or `cursor`, a sync page: by updated_at, id ascending (`offset` is ignored). `search` matches name, company, email or phone.',
    args: {
      ...syncArgs,
      search: t.arg.string(),
      limit: t.arg.int({ description: '1 to 100, default 20.' }),
      offset: t.arg.int({ description: 'Default 0.' }),
    },
    resolve: (_, args, ctx) => leads.leadPage(ctx, args),
  }),
);

builder.queryField('lead', (t) =>
  t.prismaField({
    type: Lead,
    args: idArg('The lead.'),
    description: 'One lead.',
    resolve: (query, _, args, ctx) => leads.getLead(ctx, args.id, query),
  }),
);

builder.mutationField('createLead', (t) =>
  t.prismaField({
    type: Lead,
    description: 'Creates a lead. A phone (in any of its forms) or a whatsapp_user_id already used in the organisation is a conflict.',
    args: leadArgs(true),
    resolve: (query, _, args, ctx) => leads.createLead(ctx, args, query),
  }),
);

builder.mutationField('updateLead', (t) =>
  t.prismaField({
    type: Lead,
    description: 'Updates a lead; omitted fields are unchanged.',
    args: { ...idArg('The lead.'), ...leadArgs(false) },
    resolve: (query, _, args, ctx) => leads.updateLead(ctx, args.id, args, query),
  }),
);

builder.mutationField('mergeLead', (t) =>
  t.prismaField({
    type: Lead,
    description:
      'Merges lead `source_id` into lead `id`, in one transaction: the source’s conversations, messages, deals and tags move to `id`, the fields `id` lacks (phone, whatsapp_user_id, whatsapp_username, email, company, custom-field keys) are filled from the source, and the source is deleted. Open conversations on the same channel are joined (unread counts add); on different channels the source’s is archived. `source_id` = `id` is 400; an unknown lead is 404.',
    args: {
      ...idArg('The lead that stays.'),
      source_id: t.arg({ type: 'UUID', required: true, description: 'The lead merged into it, then deleted.' }),
    },
    resolve: (query, _, args, ctx) => mergeLeads(ctx, args.id, args.source_id, query),
  }),
);

builder.mutationField('deleteLead', (t) =>
  t.field({
    type: Success,
    description: 'Deletes a lead. A lead that has deals cannot be deleted (409).',
    args: idArg('The lead.'),
    resolve: async (_, args, ctx) => (await leads.deleteLead(ctx, args.id), SUCCESS),
  }),
);

builder.queryField('leadStatuses', (t) =>
  t.prismaField({
    type: [LeadStatus],
    extensions: listCount('lead_statuses'),
    description: 'Lead statuses of the organisation.',
    resolve: (query, _, __, ctx) => leads.listLeadStatuses(ctx, query),
  }),
);

builder.mutationField('createLeadStatus', (t) =>
  t.prismaField({
    type: LeadStatus,
    args: { name: t.arg.string({ required: true }), color: t.arg.string({ required: true, description: 'Hexadecimal color.' }) },
    description: 'Adds a lead status.',
    resolve: (query, _, args, ctx) => leads.createLeadStatus(ctx, args, query),
  }),
);

builder.queryField('tags', (t) =>
  t.prismaField({
    type: [Tag],
    extensions: listCount('tags'),
    description: 'The organisation’s tag catalog, by name; with `updated_since` or `cursor`, a sync page: by updated_at, id ascending.',
    args: syncArrayArgs,
    resolve: (query, _, args, ctx) => leads.listTags(ctx, args, query),
  }),
);

builder.mutationField('createTag', (t) =>
  t.prismaField({
    type: Tag,
    args: { name: t.arg.string({ required: true }), color: t.arg.string({ required: true, description: 'Hexadecimal color.' }) },
    description: 'Adds a tag to the catalog.',
    resolve: (query, _, args, ctx) => leads.createTag(ctx, args, query),
  }),
);

builder.mutationField('updateTag', (t) =>
  t.prismaField({
    type: Tag,
    args: { ...idArg('The tag.'), name: t.arg.string(), color: t.arg.string({ description: 'Hexadecimal color.' }) },
    description: 'Renames or recolors a tag; omitted fields are unchanged.',
    resolve: (query, _, args, ctx) => leads.updateTag(ctx, args.id, args, query),
  }),
);

builder.mutationField('deleteTag', (t) =>
  t.field({
    type: Success,
    args: idArg('The tag.'),
    description: 'Deletes a tag and removes it from leads and deals.',
    resolve: async (_, args, ctx) => (await leads.deleteTag(ctx, args.id), SUCCESS),
  }),
);
