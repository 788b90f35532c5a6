// Enrolments: leads put in a cadence (at most 1,000 a request, one result per lead), listed, and taken
// out. One statement enrols them all: the enrolments, their cadence.enrolled events and their first
// step's jobs; a lead already active in the cadence is left as it is (the partial unique index).
import { Prisma } from '../../generated/prisma/client.js';
import type { Context } from '../../context/context.js';
import { invalidField, notFound } from '../../errors.js';
import { notifyJobsSql } from '../../jobs/enqueue.js';
import { canReceiveMessages } from '../common/phone.js';
import { offsetWindow } from '../common/types.js';
import { nextSendTime, type SendWindow } from './send-window.js';
import { stepJobsCte } from './scheduler.js';
import { enrolmentEventCtes, stopEnrolments } from './stops.js';
import type { EnrolmentPageSource, EnrolResult } from './types.js';
import { MAX_ENROLMENTS_PER_REQUEST } from './limits.js';

export async function enrolLeads(
  ctx: Context,
  cadenceId: string,
  input: { lead_ids: string[]; channel_id?: string | null },
): Promise<EnrolResult> {
  if (input.lead_ids.length > MAX_ENROLMENTS_PER_REQUEST)
    throw invalidField('lead_ids', `aceita no máximo ${MAX_ENROLMENTS_PER_REQUEST} leads por requisição`);
  const ids = [...new Set(input.lead_ids)];
  return ctx.db.$transaction(async (tx) => {
    const cadence = await tx.cadence.findUnique({ where: { id: cadenceId }, select: { steps: true, send_window: true } });
    if (!cadence) throw notFound('Cadência');
    const steps = cadence.steps as { delay_seconds: number }[];
    if (!steps.length) throw invalidField('cadence', 'não tem etapas: defina steps antes de inscrever leads');
    if (input.channel_id) {
      const channel = await tx.channel.findUnique({ where: { id: input.channel_id }, select: { active: true } });
      if (!channel) throw notFound('Canal');
      if (!channel.active) throw invalidField('channel_id', 'o canal está inativo');
    }
    const leads = await tx.lead.findMany({ where: { id: { in: ids } }, select: { id: true, phone: true, whatsapp_user_id: true } });
    const found = new Map(leads.map((l) => [l.id, l]));
    const reachable = leads.filter((l) => (l.phone ? canReceiveMessages(l.phone) : !!l.whatsapp_user_id)).map((l) => l.id);
    const reachableSet = new Set(reachable);
    const due = nextSendTime(cadence.send_window as SendWindow | null, new Date(Date.now() + steps[0].delay_seconds * 1000));
    const enrolled = reachable.length
      ? await tx.$tenantQuery<{ id: string; lead_id: string }[]>(
          (tenant) => Prisma.sql`
        WITH inserted AS (
          INSERT INTO cadence_enrolments (tenant_id, cadence_id, lead_id, channel_id, next_send_at)
          SELECT ${tenant}, ${cadenceId}::uuid, l.id, ${input.channel_id ?? null}::uuid, ${due}::timestamptz
          FROM unnest(${reachable}::uuid[]) AS l(id)
          ON CONFLICT (tenant_id, cadence_id, lead_id) WHERE status = 'active' DO NOTHING
          RETURNING tenant_id, id, cadence_id, lead_id, current_step, stop_reason),
        ${Prisma.join(enrolmentEventCtes('enrolled', tenant, ['cadence.enrolled'], 'inserted'), ',\n')},
        ${stepJobsCte('queued', 'inserted', Prisma.sql`${due}::timestamptz`)}
        SELECT i.id::text AS id, i.lead_id::text AS lead_id, ${notifyJobsSql(tenant)} FROM inserted i`,
        )
      : [];
    const enrolledBy = new Map(enrolled.map((e) => [e.lead_id, e.id]));
    const result: EnrolResult = { enrolled: [], skipped: [] };
    for (const id of ids) {
      const enrolment = enrolledBy.get(id);
      if (enrolment) result.enrolled.push({ id: enrolment });
      else
        result.skipped.push({
          lead_id: id,
          reason: !found.has(id) ? 'not_found' : reachableSet.has(id) ? 'already_enrolled' : 'no_recipient',
        });
    }
    return result;
  });
}

export async function enrolmentPage(
  ctx: Context,
  cadenceId: string,
  args: { status?: string | null; limit?: number | null; offset?: number | null },
): Promise<EnrolmentPageSource> {
  const cadence = await ctx.db.cadence.findUnique({ where: { id: cadenceId }, select: { id: true } });
  if (!cadence) throw notFound('Cadência');
  return { cadenceId, status: args.status ?? null, ...offsetWindow(args.limit, args.offset) };
}

/** Takes a lead out of a cadence: its active enrolment stops (`unenrolled`); 404 when it has none. */
export async function unenrolLead(ctx: Context, cadenceId: string, leadId: string): Promise<void> {
  await ctx.db.$transaction(async (tx) => {
    const stopped = await stopEnrolments(tx, Prisma.sql`e.cadence_id = ${cadenceId}::uuid AND e.lead_id = ${leadId}::uuid`, 'unenrolled');
    if (!stopped) throw notFound('Inscrição ativa do lead nesta cadência');
  });
}
