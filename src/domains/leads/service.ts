// Leads, lead statuses and tags (envelope-style endpoints). Lead rules: E.164 phone unique per
// organisation in any of its written forms (common/phone.ts; 409 ALREADY_EXISTS), a WhatsApp user id
// (BSUID) unique likewise, unknown status or tag 404 NOT_FOUND, bad input 400 VALIDATION_ERROR.
// Creating and updating a lead emit its events in the same transaction (./events.ts).
import type { Prisma } from '../../generated/prisma/client.js';
import { AppError, conflict, fromDatabaseError, notFound, invalidField } from '../../errors.js';
import type { Context } from '../../context/context.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { offsetWindow } from '../common/types.js';
import { recordLeadCreated, recordLeadUpdated } from './events.js';
import { hexColor, optionalEmail, optionalText, requiredText } from '../common/validate.js';
import { lockRow, LOCKING_TX } from '../common/lock.js';
import { customFields } from '../common/custom-fields.js';
import { escapeLike } from '../common/like.js';
import { settleLeadTags } from './loaders.js';
import type { Selection } from '../common/types.js';
import { openSync, syncedArray, withSyncKeys, SyncedPage, SYNC_ORDER, type SyncArgs, type SyncArrayArgs } from '../common/sync.js';
import type { LeadPageSource } from './types.js';
import { MAX_TAGS } from './limits.js';
import { leadPhone, phoneForms, whatsAppUserId } from '../common/phone.js';

export interface LeadInput {
  name?: string | null;
  surname?: string | null;
  phone?: string | null;
  email?: string | null;
  company?: string | null;
  avatar_url?: string | null;
  status_id?: string | null;
  tag_ids?: string[] | null;
  custom_fields?: Record<string, unknown> | null;
  whatsapp_user_id?: string | null;
}

/** 409 when another lead of the organisation has this phone (in any of its forms) or this BSUID. */
async function assertIdentitiesFree(db: TenantTx, identities: { phone?: string; whatsapp_user_id?: string | null }, except?: string) {
  const not = except ? { id: { not: except } } : {};
  if (
    identities.phone &&
    (await db.lead.findFirst({ where: { phone: { in: phoneForms(identities.phone) }, ...not }, select: { id: true } }))
  )
    throw new AppError('ALREADY_EXISTS', 'Já existe um lead com este telefone');
  if (
    identities.whatsapp_user_id &&
    (await db.lead.findFirst({ where: { whatsapp_user_id: identities.whatsapp_user_id, ...not }, select: { id: true } }))
  )
    throw new AppError('ALREADY_EXISTS', 'Já existe um lead com este whatsapp_user_id');
}

const userIdOf = (input: LeadInput) =>
  input.whatsapp_user_id === undefined ? undefined : input.whatsapp_user_id === null ? null : whatsAppUserId(input.whatsapp_user_id);

/** 404 unless `statusId` is a lead status of the organisation. Deals use it too. */
export async function assertStatusExists(db: TenantTx, statusId: string) {
  if (!(await db.leadStatus.findUnique({ where: { id: statusId }, select: { id: true } }))) throw notFound('Status');
}

/**
 * The distinct tag ids, after checking there are at most MAX_TAGS (400) and every one is a tag of the
 * organisation (404 otherwise). Deals use it too.
 */
export async function assertTagsExist(db: TenantTx, tagIds: string[]): Promise<string[]> {
  if (tagIds.length > MAX_TAGS) throw invalidField('tag_ids', `aceita no máximo ${MAX_TAGS} tags`);
  const unique = [...new Set(tagIds)];
  if (unique.length && (await db.tag.count({ where: { id: { in: unique } } })) !== unique.length) throw notFound('Tag');
  return unique;
}

function leadData(input: LeadInput) {
  return {
    surname: optionalText('surname', input.surname, 255),
    email: optionalEmail(input.email),
    company: optionalText('company', input.company, 255),
    avatar_url: optionalText('avatar_url', input.avatar_url, 2000),
    custom_fields: input.custom_fields === null ? {} : customFields(input.custom_fields),
  };
}

/** Creates a lead inside an existing transaction (deal creation with `new_lead` reuses it). */
export async function insertLead(db: TenantTx, input: LeadInput) {
  const name = requiredText('name', input.name, 255);
  const phone = leadPhone(input.phone);
  const whatsapp_user_id = userIdOf(input) ?? null;
  const data = leadData(input);
  if (input.status_id) await assertStatusExists(db, input.status_id);
  const tagIds = await assertTagsExist(db, input.tag_ids ?? []);
  await assertIdentitiesFree(db, { phone, whatsapp_user_id });
  try {
    const lead = await db.lead.create({ data: { name, phone, whatsapp_user_id, ...data, status_id: input.status_id ?? null } });
    if (tagIds.length) await db.leadTag.createMany({ data: tagIds.map((tag_id) => ({ lead_id: lead.id, tag_id })) });
    await recordLeadCreated(db, lead.id);
    return lead;
  } catch (e) {
    throw fromDatabaseError(e, 'Lead com este telefone');
  }
}

/** Sets a lead's status inside an existing transaction (a deal created with `lead_status_id`), with its events. */
export async function setLeadStatus(db: TenantTx, lead: { id: string; status_id: string | null }, statusId: string) {
  await db.lead.update({ where: { id: lead.id }, data: { status_id: statusId } });
  await recordLeadUpdated(db, lead.id, lead.status_id);
}

export async function createLead(ctx: Context, input: LeadInput, query: Selection = {}) {
  const lead = await ctx.db.$transaction((tx) => insertLead(tx, input));
  return ctx.db.lead.findUniqueOrThrow({ ...query, where: { id: lead.id } });
}

export async function updateLead(ctx: Context, id: string, input: LeadInput, query: Selection = {}) {
  return ctx.db.$transaction(async (tx) => {
    const db = tx;
    // Before reading the lead: concurrent edits of this lead (its tag list) run one after the other.
    await lockRow(db, 'leads', id);
    const existing = await db.lead.findUnique({ where: { id }, select: { id: true, status_id: true } });
    if (!existing) throw notFound('Lead');
    const data: Record<string, unknown> = { ...leadData(input) };
    if (input.name !== undefined) data.name = requiredText('name', input.name, 255);
    if (input.phone !== undefined) data.phone = leadPhone(input.phone);
    data.whatsapp_user_id = userIdOf(input);
    await assertIdentitiesFree(
      db,
      { phone: data.phone as string | undefined, whatsapp_user_id: data.whatsapp_user_id as string | undefined },
      id,
    );
    if (input.status_id !== undefined) {
      if (input.status_id) await assertStatusExists(db, input.status_id);
      data.status_id = input.status_id || null;
    }
    for (const k of Object.keys(data)) if (data[k] === undefined) delete data[k];
    // New tags alone are an edit of the lead too (sync): the database then sets updated_at.
    if (input.tag_ids != null) data.updated_at = new Date();
    try {
      await db.lead.update({ where: { id }, data });
    } catch (e) {
      throw fromDatabaseError(e, 'Lead com este telefone');
    }
    if (input.tag_ids != null) {
      const tagIds = await assertTagsExist(db, input.tag_ids);
      await db.leadTag.deleteMany({ where: { lead_id: id } });
      if (tagIds.length) await db.leadTag.createMany({ data: tagIds.map((tag_id) => ({ lead_id: id, tag_id })) });
    }
    await recordLeadUpdated(db, id, existing.status_id);
    // The answer is what this transaction wrote, not a re-read after it commits.
    await settleLeadTags(ctx, db, id);
    return db.lead.findUniqueOrThrow({ ...query, where: { id } });
  }, LOCKING_TX);
}

export async function getLead(ctx: Context, id: string, query: Selection = {}) {
  const lead = await ctx.db.lead.findUnique({ ...query, where: { id } });
  if (!lead) throw notFound('Lead');
  return lead;
}

export async function leadPage(
  ctx: Context,
  args: { search?: string | null; limit?: number | null; offset?: number | null } & SyncArgs,
): Promise<LeadPageSource> {
  const search = args.search?.trim();
  const text = search && escapeLike(search);
  const where: Prisma.LeadWhereInput = search
    ? {
        OR: [
          { name: { contains: text, mode: 'insensitive' } },
          { company: { contains: text, mode: 'insensitive' } },
          { email: { contains: text, mode: 'insensitive' } },
          { phone: { contains: escapeLike(search.replace(/[\s().-]/g, '')) } },
        ],
      }
    : {};
  const window = offsetWindow(args.limit, args.offset);
  const sync = await openSync(ctx, 'leads', args, window.limit);
  if (!sync) return { where, ...window };
  const read = (w: object, take: number | undefined, query: Selection) =>
    ctx.db.lead.findMany({ ...query, where: { AND: [where, w] }, orderBy: SYNC_ORDER, take });
  return { where, limit: window.limit, offset: 0, sync: new SyncedPage(sync, read) };
}

export async function deleteLead(ctx: Context, id: string) {
  await ctx.db.$transaction(async (tx) => {
    const db = tx;
    if (!(await db.lead.findUnique({ where: { id }, select: { id: true } }))) throw notFound('Lead');
    if (await db.deal.findFirst({ where: { lead_id: id }, select: { id: true } }))
      throw conflict('O lead possui negócios e não pode ser excluído');
    await db.lead.delete({ where: { id } });
  });
  return true;
}

// Lead statuses

export function listLeadStatuses(ctx: Context, query: Selection = {}) {
  return ctx.db.leadStatus.findMany({ ...query, orderBy: [{ created_at: 'asc' }, { id: 'asc' }] });
}

export function createLeadStatus(ctx: Context, input: { name: string; color: string }, query: Selection = {}) {
  return ctx.db.leadStatus.create({ ...query, data: { name: requiredText('name', input.name, 100), color: hexColor(input.color) } });
}

// Tags

export function listTags(ctx: Context, args: SyncArrayArgs, query: Selection = {}) {
  return syncedArray(
    ctx,
    'tags',
    args,
    () => ctx.db.tag.findMany({ ...query, orderBy: [{ name: 'asc' }, { id: 'asc' }] }),
    (where, take) => ctx.db.tag.findMany({ ...withSyncKeys(query), where, orderBy: SYNC_ORDER, take }),
  );
}

export function createTag(ctx: Context, input: { name: string; color: string }, query: Selection = {}) {
  return ctx.db.tag.create({ ...query, data: { name: requiredText('name', input.name, 100), color: hexColor(input.color) } });
}

export async function updateTag(ctx: Context, id: string, input: { name?: string | null; color?: string | null }, query: Selection = {}) {
  const data: { name?: string; color?: string } = {};
  if (input.name != null) data.name = requiredText('name', input.name, 100);
  if (input.color != null) data.color = hexColor(input.color);
  return ctx.db.$transaction(async (tx) => {
    const { count } = await tx.tag.updateMany({ where: { id }, data });
    if (count === 0) throw notFound('Tag');
    if (data.name !== undefined || data.color !== undefined) await touchTagged(tx, id);
    return tx.tag.findUniqueOrThrow({ ...query, where: { id } });
  });
}

export async function deleteTag(ctx: Context, id: string) {
  await ctx.db.$transaction(async (tx) => {
    await touchTagged(tx, id);
    const { count } = await tx.tag.deleteMany({ where: { id } });
    if (count === 0) throw notFound('Tag');
  });
}

/** The leads and deals that show a tag change with it: a sync gives them again (updated_at is set by the database). */
async function touchTagged(tx: TenantTx, tagId: string) {
  await tx.lead.updateMany({ where: { lead_tags: { some: { tag_id: tagId } } }, data: { updated_at: new Date() } });
  await tx.deal.updateMany({ where: { deal_tags: { some: { tag_id: tagId } } }, data: { updated_at: new Date() } });
}
