// The cadence record: its steps, reply rule, send window and pause. Reading is `templates.view` (every
// role); writing is `cadences.manage` (owners, admins). Deleting a cadence stops its active enrolments
// (cadence.stopped, `cadence_deleted`) in the transaction that deletes it; a resumed cadence queues the
// next step of each of its active enrolments (scheduler.ts).
import { Prisma } from '../../generated/prisma/client.js';
import type { Context } from '../../context/context.js';
import { invalidField, notFound } from '../../errors.js';
import { requiredText } from '../common/validate.js';
import { tenantIs } from '../../tenant-sql.js';
import type { Selection } from '../common/types.js';
import { validSendWindow, type SendWindow } from './send-window.js';
import { stopEnrolments } from './stops.js';
import { queueResumedSteps } from './scheduler.js';
import { MAX_DELAY_SECONDS, MAX_STEPS } from './limits.js';

export interface CadenceInput {
  name?: string | null;
  steps?: { delay_seconds: number }[] | null;
  stop_on_reply?: boolean | null;
  send_window?: SendWindow | null;
  active?: boolean | null;
}

function validSteps(steps: { delay_seconds: number }[]): { delay_seconds: number }[] {
  if (steps.length > MAX_STEPS) throw invalidField('steps', `aceita no máximo ${MAX_STEPS} etapas`);
  return steps.map((step, k) => {
    const delay = step.delay_seconds;
    if (!Number.isInteger(delay) || delay < 0 || delay > MAX_DELAY_SECONDS)
      throw invalidField(`steps[${k}].delay_seconds`, `deve ser um inteiro de 0 a ${MAX_DELAY_SECONDS} (90 dias)`);
    return { delay_seconds: delay };
  });
}

/** The columns an input sets: only those given (a PUT changes what it names). */
function columns(input: CadenceInput) {
  const data: Prisma.CadenceUncheckedUpdateInput = {};
  if (input.name !== undefined) data.name = requiredText('name', input.name, 255);
  if (input.steps !== undefined) {
    if (input.steps === null) throw invalidField('steps', 'deve ser uma lista (vazia para nenhuma etapa)');
    data.steps = validSteps(input.steps);
  }
  if (input.stop_on_reply !== undefined) {
    if (input.stop_on_reply === null) throw invalidField('stop_on_reply', 'deve ser true ou false');
    data.stop_on_reply = input.stop_on_reply;
  }
  if (input.send_window !== undefined)
    data.send_window = (validSendWindow(input.send_window) as Prisma.InputJsonObject | null) ?? Prisma.DbNull;
  if (input.active !== undefined) {
    if (input.active === null) throw invalidField('active', 'deve ser true ou false');
    data.active = input.active;
  }
  return data;
}

export function listCadences(ctx: Context, query: Selection = {}) {
  return ctx.db.cadence.findMany({ ...query, orderBy: [{ created_at: 'asc' }, { id: 'asc' }] });
}

export async function getCadence(ctx: Context, id: string, query: Selection = {}) {
  const cadence = await ctx.db.cadence.findUnique({ ...query, where: { id } });
  if (!cadence) throw notFound('Cadência');
  return cadence;
}

export function createCadence(ctx: Context, input: CadenceInput & { name: string }, query: Selection = {}) {
  const data = columns({ ...input, name: input.name });
  return ctx.db.cadence.create({
    ...query,
    data: { ...(data as Prisma.CadenceUncheckedCreateWithoutTenantInput), name: data.name as string },
  });
}

export async function updateCadence(ctx: Context, id: string, input: CadenceInput, query: Selection = {}) {
  const data = columns(input);
  return ctx.db.$transaction(async (tx) => {
    // The row lock orders a resume after any step being sent, and two resumes one after the other.
    const [before] = await tx.$tenantQuery<{ active: boolean }[]>(
      (tenant) => Prisma.sql`SELECT active FROM cadences WHERE ${tenantIs(tenant)} AND id = ${id}::uuid FOR UPDATE`,
    );
    if (!before) throw notFound('Cadência');
    const cadence = await tx.cadence.update({ ...query, where: { id }, data });
    if (!before.active && data.active === true) await queueResumedSteps(tx, id);
    return cadence;
  });
}

export async function deleteCadence(ctx: Context, id: string) {
  await ctx.db.$transaction(async (tx) => {
    await stopEnrolments(tx, Prisma.sql`e.cadence_id = ${id}::uuid`, 'cadence_deleted');
    const { count } = await tx.cadence.deleteMany({ where: { id } });
    if (count === 0) throw notFound('Cadência');
  });
}
