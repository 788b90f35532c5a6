// How enrolments end early, and the one shape of the cadence events. Every end is an UPDATE of active
// enrolments whose rows become the events, in the same statement (selectedEventCtes): the reply, the won
// or lost deal and the failed message are reactions (events/emit.ts), so they run in the very statement
// that writes the inbound message, the deal's move or the message's failure, and a step due just after
// it finds the enrolment stopped.
import { Prisma } from '../../generated/prisma/client.js';
import { selectedEventCtes, type EventInput, type EventReaction } from '../../events/emit.js';
import { tenantIs } from '../../tenant-sql.js';
import { notifyJobsSql } from '../../jobs/enqueue.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import type { StopReason } from './types.js';

/**
 * The events of the enrolment rows a CTE returned (columns id, cadence_id, lead_id, current_step,
 * stop_reason), one of each type per row, in the order of `types`: `step` is an SQL expression over them
 * (alias `e`).
 */
export function enrolmentEventCtes(name: string, tenant: Prisma.Sql, types: string[], from: string, step = Prisma.sql`e.current_step`) {
  return selectedEventCtes(
    name,
    tenant,
    Prisma.sql`SELECT t.type, jsonb_build_object('enrolment_id', e.id, 'cadence_id', e.cadence_id, 'lead_id', e.lead_id,
      'step', ${step}, 'stop_reason', e.stop_reason)
    FROM ${Prisma.raw(from)} e CROSS JOIN unnest(${types}::text[]) WITH ORDINALITY AS t(type, n) ORDER BY e.id, t.n`,
  );
}

const ENDED = `id, cadence_id, lead_id, current_step, stop_reason`;

/**
 * CTEs that end the active enrolments `which` selects (a condition on alias `e`, the enrolment, and `c`,
 * its cadence) with `status` and `reason` (an SQL text expression), and write their cadence.stopped events.
 */
export function stopCtes(
  name: string,
  tenant: Prisma.Sql,
  which: Prisma.Sql,
  reason: Prisma.Sql,
  status: 'stopped' | 'failed' = 'stopped',
) {
  return [
    Prisma.sql`${Prisma.raw(name)} AS (
    UPDATE cadence_enrolments e SET status = ${status}::"EnrolmentStatus", stop_reason = ${reason}, next_send_at = NULL
    FROM cadences c
    WHERE ${tenantIs(tenant, 'e')} AND e.status = 'active' AND c.tenant_id = e.tenant_id AND c.id = e.cadence_id AND (${which})
    RETURNING e.${Prisma.raw(ENDED.replaceAll(', ', ', e.'))})`,
    ...enrolmentEventCtes(name, tenant, ['cadence.stopped'], name),
  ];
}

/** Ends enrolments in their own statement (unenrolment, a deleted cadence, a failed send); answers how many. */
export async function stopEnrolments(
  tx: Pick<TenantTx, '$tenantQuery'>,
  which: Prisma.Sql,
  reason: StopReason,
  status: 'stopped' | 'failed' = 'stopped',
): Promise<number> {
  const [row] = await tx.$tenantQuery<{ n: number }[]>(
    (tenant) => Prisma.sql`
    WITH ${Prisma.join(stopCtes('ended', tenant, which, Prisma.sql`${reason}::text`, status), ',\n')}
    SELECT count(*)::int AS n, ${notifyJobsSql(tenant)} FROM ended`,
  );
  return row.n;
}

const uuids = (events: EventInput[], key: string) => [
  ...new Set(events.map((e) => e.data[key]).filter((v): v is string => typeof v === 'string')),
];

/** The lead wrote: its enrolments in cadences with stop_on_reply stop (`replied`). */
const onReply: EventReaction = {
  on: ['message.received'],
  ctes: (tenant, events, when) =>
    stopCtes(
      'cadence_replied',
      tenant,
      Prisma.sql`e.lead_id = ANY(${uuids(events, 'lead_id')}::uuid[]) AND c.stop_on_reply AND (${when})`,
      Prisma.sql`'replied'`,
    ),
};

/** A deal of the lead was won or lost: all its enrolments stop (`deal_won`, `deal_lost`). */
const onDealClosed: EventReaction = {
  on: ['deal.won', 'deal.lost'],
  ctes: (tenant, events, when) => {
    const won = uuids(
      events.filter((e) => e.type === 'deal.won'),
      'lead_id',
    );
    return stopCtes(
      'cadence_deal_closed',
      tenant,
      Prisma.sql`e.lead_id = ANY(${uuids(events, 'lead_id')}::uuid[]) AND (${when})`,
      Prisma.sql`CASE WHEN e.lead_id = ANY(${won}::uuid[]) THEN 'deal_won' ELSE 'deal_lost' END`,
    );
  },
};

/** A cadence's message failed (its retries spent, or the provider reported it): the enrolment fails (`send_failed`). */
const onMessageFailed: EventReaction = {
  on: ['message.failed'],
  ctes: (tenant, events, when) =>
    stopCtes(
      'cadence_send_failed',
      tenant,
      Prisma.sql`e.id IN (SELECT s.enrolment_id FROM cadence_sends s WHERE ${tenantIs(tenant, 's')} AND s.message_id = ANY(${uuids(events, 'id')}::uuid[])) AND (${when})`,
      Prisma.sql`'send_failed'`,
      'failed',
    ),
};

export const CADENCE_REACTIONS: readonly EventReaction[] = [onReply, onDealClosed, onMessageFailed];
