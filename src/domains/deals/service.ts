// Deal rules, one function per operation (spec "Deals", "Deal stage moves", "Create deal body").
// Every change runs in one transaction with its history entries and events (recordDealChange); the deal's `total` column is kept
// here (Σ price × qty, or value without lines) so the board can aggregate it.
import { Prisma, type Deal as DealRow } from '../../generated/prisma/client.js';
import { requireTenant } from '../../auth/viewer.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { tenantIs } from '../../tenant-sql.js';
import { invalidInput, notFound } from '../../errors.js';
import type { Context } from '../../context/context.js';
import { optionalText } from '../common/validate.js';
import { assertTagsExist, insertLead, setLeadStatus } from '../leads/service.js';
import { MAX_TAGS } from '../leads/limits.js';
import { recordDealChange, recordDealsDeleted, type DealEventInput } from './history.js';
import { stageState, transitionEvent, type StageKindValue } from './stage-transition.js';
import { buildLines, dealTotal, type DealProductInput, type LineData } from './lines.js';
import { money, toNumber, type Money } from '../common/money.js';
import { lockRow, LOCKING_TX } from '../common/lock.js';
import { settleDealExtras, settleExtras } from './loaders.js';
import type { DealSnapshot } from './payload.js';

export interface NewLeadInput {
  name?: string | null;
  phone?: string | null;
  email?: string | null;
  company?: string | null;
}

export interface CreateDealInput {
  pipeline_id: string;
  stage_id: string;
  lead_id?: string | null;
  new_lead?: NewLeadInput | null;
  owner_id?: string | null;
  loss_reason?: string | null;
  lead_status_id?: string | null;
  products?: DealProductInput[] | null;
  tag_ids?: string[] | null;
  origin?: string | null;
  value?: number | null;
  note?: string | null;
}

export interface UpdateDealInput {
  owner_id?: string | null;
  value?: number | null;
  note?: string | null;
  origin?: string | null;
  products?: DealProductInput[] | null;
}

/** Creation holds the organisation's number counter until commit; give waiting creations room. */
const CREATE_TX = { maxWait: 20_000, timeout: 30_000 };

const origin = (value: string | null | undefined) => optionalText('origin', value, 100) || 'manual';
const note = (value: string | null | undefined) => optionalText('note', value, 10_000);

/** A deleted user keeps the deals it owns but is given no new ones. */
async function assertUser(db: TenantTx, userId: string) {
  if (!(await db.user.findFirst({ where: { id: userId, deleted_at: null }, select: { id: true } }))) throw notFound('Usuário');
}

/**
 * The answer's extras from what the write saw: the snapshot its history read (no statement), or when it
 * recorded nothing, read now in its transaction.
 */
async function settleAnswer(ctx: Context, db: TenantTx, id: string, snapshots: Map<string, DealSnapshot>) {
  const snapshot = snapshots.get(id);
  if (snapshot) settleExtras(ctx, id, snapshot.extras);
  else await settleDealExtras(ctx, db, id);
}

async function insertLines(db: TenantTx, dealId: string, lines: LineData[]) {
  if (lines.length) await db.dealProduct.createMany({ data: lines.map((l) => ({ ...l, deal_id: dealId })) });
}

/** What a creation checks, read in one statement: the pipeline, its stage, and the lead, owner and status named. */
interface CreateChecks {
  pipeline_ok: boolean;
  stage: { id: string; name: string; kind: StageKindValue } | null;
  lead: { id: string; status_id: string | null } | null;
  owner_ok: boolean;
  status_ok: boolean;
}

async function createChecks(db: TenantTx, input: CreateDealInput): Promise<CreateChecks> {
  const uuid = (id: string | null | undefined) => Prisma.sql`${id ?? null}::uuid`;
  const [checks] = await db.$tenantQuery<CreateChecks[]>(
    (tenant) => Prisma.sql`SELECT
      EXISTS (SELECT 1 FROM pipelines WHERE ${tenantIs(tenant)} AND id = ${uuid(input.pipeline_id)}) AS pipeline_ok,
      (SELECT json_build_object('id', s.id, 'name', s.name, 'kind', s.kind::text) FROM stages s
        WHERE ${tenantIs(tenant, 's')} AND s.id = ${uuid(input.stage_id)} AND s.pipeline_id = ${uuid(input.pipeline_id)}) AS stage,
      (SELECT json_build_object('id', l.id, 'status_id', l.status_id) FROM leads l WHERE ${tenantIs(tenant, 'l')} AND l.id = ${uuid(input.lead_id)}) AS lead,
      EXISTS (SELECT 1 FROM users WHERE ${tenantIs(tenant)} AND id = ${uuid(input.owner_id)} AND deleted_at IS NULL) AS owner_ok,
      EXISTS (SELECT 1 FROM lead_statuses WHERE ${tenantIs(tenant)} AND id = ${uuid(input.lead_status_id)}) AS status_ok`,
  );
  return checks;
}

interface NewDeal {
  pipeline_id: string;
  stage_id: string;
  lead_id: string;
  owner_id: string | null;
  value: Money;
  total: Money;
  origin: string;
  note: string | null;
  loss_reason: string | null;
  won_at: Date | null;
  lost_at: Date | null;
  stage_entered_at: Date;
}

/**
 * The deal with its lines and tags in one statement: the organisation's counter row is incremented (and
 * stays locked until commit, so concurrent creations get consecutive, distinct numbers), the deal takes
 * its number, its lines and tags reference it.
 */
async function insertDeal(db: TenantTx, deal: NewDeal, lines: LineData[], tagIds: string[]): Promise<DealRow> {
  // Both stamped here, as Prisma stamps a created row.
  const now = new Date();
  const [row] = await db.$tenantQuery<DealRow[]>(
    (tenant) => Prisma.sql`WITH n AS (
      UPDATE tenants SET deal_number_seq = deal_number_seq + 1 WHERE id = ${tenant} RETURNING deal_number_seq
    ), d AS (
      INSERT INTO deals (tenant_id, number, pipeline_id, stage_id, lead_id, owner_id, value, total, origin, note, loss_reason,
                         won_at, lost_at, stage_entered_at, created_at, updated_at)
      SELECT ${tenant}, n.deal_number_seq, ${deal.pipeline_id}::uuid, ${deal.stage_id}::uuid, ${deal.lead_id}::uuid, ${deal.owner_id}::uuid,
             ${deal.value.toString()}::numeric, ${deal.total.toString()}::numeric, ${deal.origin}, ${deal.note}, ${deal.loss_reason},
             ${deal.won_at}::timestamptz, ${deal.lost_at}::timestamptz, ${deal.stage_entered_at}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
      FROM n RETURNING *
    ), lines AS (
      INSERT INTO deal_products (tenant_id, deal_id, product_id, name, price, qty, custom, position)
      SELECT ${tenant}, d.id, x.product_id, x.name, x.price, x.qty, x.custom, x.position
      FROM d, jsonb_to_recordset(${JSON.stringify(lines)}::jsonb) AS x(product_id uuid, name text, price numeric, qty int, custom boolean, position int)
    ), tags AS (
      INSERT INTO deal_tags (tenant_id, deal_id, tag_id)
      SELECT ${tenant}, d.id, x.tag_id::uuid FROM d, jsonb_array_elements_text(${JSON.stringify(tagIds)}::jsonb) AS x(tag_id)
    )
    SELECT * FROM d`,
  );
  return row;
}

/**
 * Statements per creation with an existing lead: the checks, the insert (deal, lines, tags), the history
 * with the card read back, the events and their dispatch jobs (test/deals/create.test.ts counts them).
 * Tags and catalog lines add one read each; a new lead or a status change add their own writes.
 */
export async function createDeal(ctx: Context, input: CreateDealInput): Promise<DealRow> {
  requireTenant(ctx.viewer);
  if (!input.lead_id && !input.new_lead) throw invalidInput('Informe lead_id ou new_lead');
  if (input.lead_id && input.new_lead) throw invalidInput('Informe apenas um entre lead_id e new_lead');
  const value = money('value', input.value);
  const fields = { origin: origin(input.origin), note: note(input.note) ?? null };
  // The answer is built inside the transaction (the row it inserted, the lines and tags it saw), never
  // re-read after commit, when another writer may already have changed the deal.
  return ctx.db.$transaction(async (tx) => {
    const db = tx;
    const checks = await createChecks(db, input);
    if (!checks.pipeline_ok) throw notFound('Pipeline');
    const stage = checks.stage;
    if (!stage) throw invalidInput('A etapa não pertence ao pipeline');
    const state = stageState(stage.kind, input.loss_reason, new Date());
    if (input.owner_id && !checks.owner_ok) throw notFound('Usuário');
    if (input.lead_status_id && !checks.status_ok) throw notFound('Status');
    const tagIds = await assertTagsExist(db, input.tag_ids ?? []);
    const lines = await buildLines(db, input.products ?? []);
    let leadId: string;
    if (input.lead_id) {
      const lead = checks.lead;
      if (!lead) throw notFound('Lead');
      leadId = lead.id;
      if (input.lead_status_id && input.lead_status_id !== lead.status_id) await setLeadStatus(db, lead, input.lead_status_id);
    } else {
      leadId = (await insertLead(db, { ...input.new_lead, status_id: input.lead_status_id })).id;
    }
    const total = dealTotal(lines, value);
    const deal = await insertDeal(
      db,
      {
        pipeline_id: input.pipeline_id,
        stage_id: stage.id,
        lead_id: leadId,
        owner_id: input.owner_id ?? null,
        value,
        total,
        ...fields,
        ...state,
      },
      lines,
      tagIds,
    );
    const snapshots = await recordDealChange(db, ctx, deal.id, [
      {
        type: 'created',
        to_stage_id: stage.id,
        data: { stage_name: stage.name, total: toNumber(total), ...(state.loss_reason ? { loss_reason: state.loss_reason } : {}) },
      },
    ]);
    await settleAnswer(ctx, db, deal.id, snapshots);
    return deal;
  }, CREATE_TX);
}

/** The deal, read after locking its row: this transaction's change of it waits for any other's. */
async function lockedDeal(db: TenantTx, id: string): Promise<DealRow> {
  await lockRow(db, 'deals', id);
  const deal = await db.deal.findUnique({ where: { id } });
  if (!deal) throw notFound('Negócio');
  return deal;
}

export async function updateDeal(ctx: Context, id: string, input: UpdateDealInput): Promise<DealRow> {
  requireTenant(ctx.viewer);
  // The answer is built from what this transaction wrote, not re-read after it commits.
  return ctx.db.$transaction(async (tx) => {
    const db = tx;
    // Before reading the deal and its lines: concurrent edits of this deal run one after the other.
    const deal = await lockedDeal(db, id);
    const data: Prisma.DealUncheckedUpdateInput = {};
    const events: DealEventInput[] = [];
    const changed: string[] = [];
    if (input.owner_id !== undefined && input.owner_id !== deal.owner_id) {
      if (input.owner_id) await assertUser(db, input.owner_id);
      data.owner_id = input.owner_id;
      changed.push('owner_id');
    }
    if (input.note !== undefined) {
      const v = note(input.note) ?? null;
      if (v !== deal.note) {
        data.note = v;
        changed.push('note');
      }
    }
    if (input.origin !== undefined) {
      const v = origin(input.origin);
      if (v !== deal.origin) {
        data.origin = v;
        changed.push('origin');
      }
    }
    let value = deal.value;
    if (input.value !== undefined) {
      value = money('value', input.value, toNumber(deal.value));
      if (!value.equals(deal.value)) {
        data.value = value;
        events.push({ type: 'value_changed', data: { from: toNumber(deal.value), to: toNumber(value) } });
      }
    }
    let total = deal.total;
    if (input.products != null) {
      const existing = await db.dealProduct.findMany({ where: { deal_id: id } });
      const lines = await buildLines(db, input.products, existing);
      await db.dealProduct.deleteMany({ where: { deal_id: id } });
      await insertLines(db, id, lines);
      total = dealTotal(lines, value);
      events.push({
        type: 'products_changed',
        data: { from_lines: existing.length, to_lines: lines.length, from_total: toNumber(deal.total), to_total: toNumber(total) },
      });
    } else if (data.value !== undefined) {
      const lineCount = await db.dealProduct.count({ where: { deal_id: id } });
      if (lineCount === 0) total = value;
    }
    if (!total.equals(deal.total)) data.total = total;
    if (changed.length) events.push({ type: 'updated', data: { fields: changed } });
    const written =
      Object.keys(data).length || input.products != null
        ? await db.deal.update({ where: { id }, data: { ...data, updated_at: new Date() } })
        : deal;
    await settleAnswer(ctx, db, id, await recordDealChange(db, ctx, id, events));
    return written;
  }, LOCKING_TX);
}

export async function moveDeal(ctx: Context, id: string, input: { stage_id: string; loss_reason?: string | null }): Promise<DealRow> {
  requireTenant(ctx.viewer);
  // Concurrent changes of this deal run one after the other; the answer is what this move wrote.
  return ctx.db.$transaction(async (tx) => {
    const db = tx;
    const deal = await lockedDeal(db, id);
    const stages = await db.stage.findMany({ where: { id: { in: [input.stage_id, deal.stage_id] } } });
    const to = stages.find((s) => s.id === input.stage_id);
    if (!to || to.pipeline_id !== deal.pipeline_id) throw invalidInput('A etapa de destino não pertence ao pipeline do negócio');
    const from = stages.find((s) => s.id === deal.stage_id);
    const state = stageState(to.kind, input.loss_reason, new Date());
    // A move to the deal's own stage re-applies its rules but is no change of stage: time in stage goes on.
    if (to.id === deal.stage_id) state.stage_entered_at = deal.stage_entered_at;
    const moved = await db.deal.update({ where: { id }, data: { stage_id: to.id, ...state } });
    const snapshots = await recordDealChange(db, ctx, id, [
      {
        type: transitionEvent(to.kind),
        from_stage_id: deal.stage_id,
        to_stage_id: to.id,
        data: {
          from_stage_name: from?.name ?? null,
          to_stage_name: to.name,
          ...(state.loss_reason ? { loss_reason: state.loss_reason } : {}),
        },
      },
    ]);
    await settleAnswer(ctx, db, id, snapshots);
    return moved;
  }, LOCKING_TX);
}

export async function getDeal(ctx: Context, id: string): Promise<DealRow> {
  const deal = await ctx.db.deal.findUnique({ where: { id } });
  if (!deal) throw notFound('Negócio');
  return deal;
}

/** Deletes the deal with its lines, tags, activities and history (cascades); the lead is kept. */
export async function deleteDeal(ctx: Context, id: string): Promise<void> {
  await ctx.db.$transaction(async (tx) => {
    const deleted = await tx.$tenantQuery<{ id: string; pipeline_id: string }[]>(
      (tenant) =>
        Prisma.sql`DELETE FROM deals WHERE ${tenantIs(tenant)} AND id = ${id}::uuid RETURNING id::text AS id, pipeline_id::text AS pipeline_id`,
    );
    if (deleted.length === 0) throw notFound('Negócio');
    await recordDealsDeleted(tx, ctx, deleted);
  });
}

async function dealAndTag(db: TenantTx, id: string, tagId: string) {
  const [deal, tag] = await Promise.all([
    db.deal.findUnique({ where: { id }, select: { id: true } }),
    db.tag.findUnique({ where: { id: tagId }, select: { id: true } }),
  ]);
  if (!deal) throw notFound('Negócio');
  if (!tag) throw notFound('Tag');
}

/** A change the deal shows (its tags, its todos) is an edit of it: a sync gives it again (the database sets updated_at). */
export async function touchDeal(tx: TenantTx, id: string): Promise<void> {
  await tx.deal.updateMany({ where: { id }, data: { updated_at: new Date() } });
}

/** Tag changes are edits of the deal: an `updated` entry (fields ['tags']) and `deal.updated`, when something changed. */
const TAGS_CHANGED: DealEventInput = { type: 'updated', data: { fields: ['tags'] } };

export async function addDealTag(ctx: Context, id: string, tagId: string): Promise<void> {
  requireTenant(ctx.viewer);
  await ctx.db.$transaction(async (tx) => {
    // Concurrent additions to one deal count one after the other, so the cap holds.
    await lockRow(tx, 'deals', id);
    await dealAndTag(tx, id, tagId);
    const tags = await tx.dealTag.findMany({ where: { deal_id: id }, select: { tag_id: true } });
    if (tags.length >= MAX_TAGS && !tags.some((t) => t.tag_id === tagId))
      throw invalidInput(`Um negócio aceita no máximo ${MAX_TAGS} tags`);
    const { count } = await tx.dealTag.createMany({ data: [{ deal_id: id, tag_id: tagId }], skipDuplicates: true });
    if (count) {
      await touchDeal(tx, id);
      await recordDealChange(tx, ctx, id, [TAGS_CHANGED]);
    }
  });
}

export async function removeDealTag(ctx: Context, id: string, tagId: string): Promise<void> {
  requireTenant(ctx.viewer);
  await ctx.db.$transaction(async (tx) => {
    await dealAndTag(tx, id, tagId);
    const { count } = await tx.dealTag.deleteMany({ where: { deal_id: id, tag_id: tagId } });
    if (count) {
      await touchDeal(tx, id);
      await recordDealChange(tx, ctx, id, [TAGS_CHANGED]);
    }
  });
}
