// The `cadences.send` queue: one job per enrolment and step, due at the step's time, claimed in batches
// of an organisation's due jobs (each job its own transaction). The job locks its
// enrolment and sends only if the enrolment is still active at that very step, so a job run twice (a
// process killed after its commit), queued twice (a resume) or outlived by a stop sends nothing more:
// the step's messages, the cadence_sends rows that key them (enrolment, step, message), the enrolment's
// advance, its events and the next step's job commit together or not at all. The messages go out
// through `messages.deliver` like any template message; one that fails for good fails the enrolment
// (stops.ts). Outside the cadence's send window a step waits for the next opening; a paused cadence's
// jobs end, and resuming it queues them again (queueResumedSteps).
import { Prisma } from '../../generated/prisma/client.js';
import type { Config } from '../../config.js';
import { tenantClientsOf, type TenantTx } from '../../db/tenant-scope.js';
import { AppError } from '../../errors.js';
import { notifyJobsSql } from '../../jobs/enqueue.js';
import { defineQueue, fairQueue, type BatchOutcome, type QueueDeps } from '../../jobs/queue.js';
import { log } from '../../log.js';
import { tenantIs } from '../../tenant-sql.js';
import { storeTemplateMessage } from '../templates/send.js';
import { nextSendTime, type SendWindow } from './send-window.js';
import { enrolmentEventCtes, stopEnrolments } from './stops.js';

/** Step sends, grouped by organisation for fair claims. */
export const SEND_QUEUE = fairQueue('cadences.send', 'tenant_id');

export type StepPayload = { tenant_id: string; enrolment_id: string; step: number };

/**
 * An organisation's step sends at once, across every process: half of a process's job slots, so one
 * organisation's thousands of due sends leave the other half to everyone else's, claimed beside them.
 */
export const sendsPerOrganisation = (config: Pick<Config, 'workerConcurrency'>) => Math.max(1, Math.ceil(config.workerConcurrency / 2));

/**
 * A CTE queueing the step job of each enrolment row `from` returns (columns id, current_step), due at
 * `runAt` (an SQL timestamptz over alias `e`). The statement's SELECT adds the NOTIFY (notifyJobsSql).
 */
export function stepJobsCte(name: string, from: string, runAt: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`${Prisma.raw(name)} AS (
    INSERT INTO jobs (queue, payload, run_at, group_key)
    SELECT ${SEND_QUEUE.queue}::text, jsonb_build_object('tenant_id', e.tenant_id::text, 'enrolment_id', e.id::text, 'step', e.current_step),
      ${runAt}, e.tenant_id::text
    FROM ${Prisma.raw(from)} e
    RETURNING id)`;
}

/** Queues the next step of every active enrolment of a cadence (it was paused), due when it was, or now. */
export async function queueResumedSteps(tx: Pick<TenantTx, '$tenantQuery'>, cadenceId: string): Promise<void> {
  await tx.$tenantQuery(
    (tenant) => Prisma.sql`
    WITH resumed AS (
      SELECT tenant_id, id, current_step, next_send_at FROM cadence_enrolments e
      WHERE ${tenantIs(tenant, 'e')} AND e.cadence_id = ${cadenceId}::uuid AND e.status = 'active'),
    ${stepJobsCte('queued', 'resumed', Prisma.sql`GREATEST(e.next_send_at, now())`)}
    SELECT count(*)::int AS n, ${notifyJobsSql(tenant)} FROM queued`,
  );
}

interface LockedEnrolment {
  status: string;
  current_step: number;
  lead_id: string;
  cadence_id: string;
  channel_id: string | null;
  active: boolean;
  steps: { delay_seconds: number }[];
  send_window: SendWindow | null;
}

/** Why a step cannot be sent to this lead: the enrolment fails with this reason. */
class StepFailed extends Error {
  constructor(
    readonly reason: 'send_failed' | 'template_not_approved',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Advances the enrolment past `step` (completed after the last), with its events (step_sent when the step
 * was one of the cadence's: its steps may have been shortened since it was queued) and the next step's job.
 */
async function advance(tx: TenantTx, enrolmentId: string, step: number, enrolment: LockedEnrolment, now: Date) {
  const count = enrolment.steps.length;
  const next = Math.min(step + 1, count);
  const last = next >= count;
  const due = last ? null : nextSendTime(enrolment.send_window, new Date(now.getTime() + enrolment.steps[next].delay_seconds * 1000));
  const stepSql = Prisma.sql`${Math.min(step, count - 1)}::int`;
  await tx.$tenantQuery(
    (tenant) => Prisma.sql`
    WITH advanced AS (
      UPDATE cadence_enrolments e SET current_step = ${next}, next_send_at = ${due}::timestamptz,
        status = ${last ? 'completed' : 'active'}::"EnrolmentStatus"
      WHERE ${tenantIs(tenant, 'e')} AND e.id = ${enrolmentId}::uuid
      RETURNING e.tenant_id, e.id, e.cadence_id, e.lead_id, e.current_step, e.stop_reason),
    ${Prisma.join(
      [
        ...enrolmentEventCtes(
          'advance',
          tenant,
          [...(step < count ? ['cadence.step_sent'] : []), ...(last ? ['cadence.completed'] : [])],
          'advanced',
          stepSql,
        ),
        ...(last ? [] : [stepJobsCte('queued', 'advanced', Prisma.sql`${due}::timestamptz`)]),
      ],
      ',\n',
    )}
    SELECT ${notifyJobsSql(tenant)}`,
  );
}

/** Sends the step's messages in message order, each keyed by (enrolment, step, message). */
async function sendStep(tx: TenantTx, config: Config, enrolmentId: string, step: number, enrolment: LockedEnrolment) {
  const associations = await tx.cadenceAssociation.findMany({
    where: { cadence_id: enrolment.cadence_id, step_index: step },
    orderBy: [{ message_index: 'asc' }],
    include: { template: true },
  });
  const unapproved = associations.find((a) => a.template.status !== 'APPROVED');
  if (unapproved)
    throw new StepFailed('template_not_approved', `o template ${unapproved.template.template_name} está ${unapproved.template.status}`);
  if (!associations.length) return;
  const lead = await tx.lead.findUniqueOrThrow({ where: { id: enrolment.lead_id } });
  const sends: { message_index: number; message_id: string }[] = [];
  for (const a of associations) {
    try {
      const message = await storeTemplateMessage(tx, config, {
        lead,
        template: a.template,
        parameters: a.parameter_mapping as Record<string, unknown>,
        channelId: enrolment.channel_id,
      });
      sends.push({ message_index: a.message_index, message_id: message.id });
    } catch (error) {
      if (error instanceof AppError) throw new StepFailed('send_failed', error.message);
      throw error;
    }
  }
  await tx.cadenceSend.createMany({ data: sends.map((s) => ({ enrolment_id: enrolmentId, step, ...s })) });
}

/** One step job: the send under the enrolment's lock, or the enrolment failed when the step cannot be sent. */
async function runStep(db: QueueDeps['db'], config: Config, { tenant_id, enrolment_id, step }: StepPayload): Promise<void> {
  const scoped = tenantClientsOf(db.prisma, db.direct, db.oneSnapshot).for(tenant_id);
  try {
    await scoped.$transaction(async (tx) => {
      const [enrolment] = await tx.$tenantQuery<LockedEnrolment[]>(
        (tenant) => Prisma.sql`
        SELECT e.status::text AS status, e.current_step, e.lead_id::text AS lead_id, e.cadence_id::text AS cadence_id,
          e.channel_id::text AS channel_id, c.active, c.steps, c.send_window
        FROM cadence_enrolments e JOIN cadences c ON c.tenant_id = e.tenant_id AND c.id = e.cadence_id
        WHERE ${tenantIs(tenant, 'e')} AND e.id = ${enrolment_id}::uuid
        FOR UPDATE OF e`,
      );
      // Stopped, already past this step (a rerun), or paused (the resume queues it again).
      if (!enrolment || enrolment.status !== 'active' || enrolment.current_step !== step || !enrolment.active) return;
      const now = new Date();
      if (step < enrolment.steps.length) {
        const opens = nextSendTime(enrolment.send_window, now);
        if (opens > now) {
          await tx.$tenantQuery(
            (tenant) => Prisma.sql`
            WITH waiting AS (
              UPDATE cadence_enrolments e SET next_send_at = ${opens}::timestamptz
              WHERE ${tenantIs(tenant, 'e')} AND e.id = ${enrolment_id}::uuid RETURNING e.tenant_id, e.id, e.current_step),
            ${stepJobsCte('queued', 'waiting', Prisma.sql`${opens}::timestamptz`)}
            SELECT ${notifyJobsSql(tenant)}`,
          );
          return;
        }
        await sendStep(tx, config, enrolment_id, step, enrolment);
      }
      await advance(tx, enrolment_id, step, enrolment, now);
    });
  } catch (error) {
    if (!(error instanceof StepFailed)) throw error;
    log.info('cadences.send: the enrolment failed', { enrolment_id, step, reason: error.reason, error: error.message });
    await scoped.$transaction((tx) =>
      stopEnrolments(tx, Prisma.sql`e.id = ${enrolment_id}::uuid AND e.current_step = ${step}`, error.reason, 'failed'),
    );
  }
}

/** Step jobs claimed at once for one organisation: one claim for many sends (each its own transaction). */
export const SEND_BATCH = 20;
/** Past this a batch gives back the jobs it has not started, so a slot is never held long. */
export const SEND_BATCH_BUDGET_MS = 1_000;

export const cadenceSendQueue = ({ db, config }: QueueDeps) =>
  defineQueue<StepPayload>({
    name: SEND_QUEUE,
    fairness: { perKey: sendsPerOrganisation(config) },
    batch: {
      size: SEND_BATCH,
      handler: async (jobs, signal) => {
        const started = performance.now();
        const outcomes: BatchOutcome[] = [];
        for (const { payload } of jobs) {
          if (signal.aborted || (outcomes.length > 0 && performance.now() - started > SEND_BATCH_BUDGET_MS)) {
            outcomes.push('release');
            continue;
          }
          try {
            await runStep(db, config, payload);
            outcomes.push('done');
          } catch (error) {
            outcomes.push(error instanceof Error ? error : new Error(String(error)));
          }
        }
        return outcomes;
      },
    },
  });
