// The one way to record that something happened in an organisation: `emit` writes the event and queues
// its dispatch in the transaction of the change, so an event exists, and is delivered, exactly when its
// change commits. The types are the domains' (./types.ts); the webhooks domain handles the
// EVENTS_DISPATCH_QUEUE jobs.
import { randomUUID } from 'node:crypto';
import { Prisma, type Event, type PrismaClient } from '../generated/prisma/client.js';
import type { TenantTx } from '../db/tenant-scope.js';
import { JOBS_CHANNEL } from '../jobs/enqueue.js';
import { fairQueue } from '../jobs/queue.js';
import { isEventType, type EventType } from './types.js';

/**
 * Grouped by organisation (a fair batch queue: one fan-out of an organisation at a time), so one
 * organisation's flood of events never stands in front of another's.
 */
export const EVENTS_DISPATCH = fairQueue('events.dispatch', 'tenant_id');
export const EVENTS_DISPATCH_QUEUE = EVENTS_DISPATCH.queue;

/**
 * The organisation rides along so the handler reads the event by its key (tenant_id, id). Absent only
 * from jobs queued by a version before it (processes still running it during a rolling deploy).
 */
export type EventsDispatchPayload = { tenant_id?: string; event_id: string };

/** An interactive transaction of the tenant-scoped client (which supplies the tenant) or of the unscoped one. */
export type EmitClient = Pick<TenantTx, '$tenantQuery'> | Pick<PrismaClient, '$queryRaw'>;

export async function emit(
  tx: EmitClient,
  type: EventType,
  data: Record<string, unknown>,
  options: { /** Required with the unscoped client; a tenant-scoped client sets its own tenant. */ tenantId?: string } = {},
) {
  const [event] = await emitMany(tx, [{ type, data }], options);
  return event;
}

export interface EventInput {
  type: EventType;
  data: Record<string, unknown>;
}

/** Programming errors, refused before anything is written. */
function checkTypes(events: EventInput[]) {
  const unknown = events.find((e) => !isEventType(e.type));
  if (unknown) throw new Error(`emit: unknown event type "${unknown.type}"`);
}

/**
 * The events of one change, in order, and their dispatch jobs, in one statement however many there are
 * (a pipeline save that moves a thousand deals): `emitCtes`, and the NOTIFY that wakes the job runners.
 * Answers the events as written, in the order given.
 */
export async function emitMany(tx: EmitClient, events: EventInput[], options: { tenantId?: string } = {}): Promise<Event[]> {
  checkTypes(events);
  if ('$transaction' in tx) throw new Error('emit: call it with the transaction of the change (inside $transaction)');
  if (!events.length) return [];
  // pg_notify returns void, which Prisma cannot read: hence the cast. Identical notifications of one
  // transaction are delivered once.
  const statement = (tenant: Prisma.Sql) => Prisma.sql`
    WITH ${emitCtes(tenant, events, Prisma.sql`TRUE`)}
    SELECT emitted.id::text AS id, emitted.tenant_id::text AS tenant_id, emitted.type, emitted.data, emitted.created_at,
      pg_notify(${JOBS_CHANNEL}, ${tenant}::text)::text AS notified
    FROM emitted JOIN emit_rows ON emit_rows.id = emitted.id
    ORDER BY emit_rows.n`;
  let created: (Event & { notified: string })[];
  if ('$tenantQuery' in tx) created = await tx.$tenantQuery((tenant) => statement(tenant));
  else if (options.tenantId) created = await tx.$queryRaw(statement(Prisma.sql`${options.tenantId}::uuid`));
  else throw new Error('emit: the unscoped client needs options.tenantId');
  return created.map(({ notified: _, ...event }) => event);
}

/**
 * The one way events are written: common table expressions for the `WITH` of a statement (emitMany's,
 * or a write that must stay one statement: an inbound message). `emit_rows` holds the events (ids made
 * here, which keep the order of the change without relying on the order INSERT … RETURNING answers
 * in; `n` is their place), `emitted` writes them when `when` (an SQL condition) holds and returns them
 * whole, `queued` writes their dispatch jobs in the same order. The statement's final SELECT adds
 * `pg_notify(JOBS_CHANNEL, tenant::text)` (as enqueueMany does); data-modifying CTEs run whether or not
 * it reads them.
 */
export function emitCtes(
  tenant: Prisma.Sql,
  events: EventInput[],
  when: Prisma.Sql,
  /** The data as written, from the given data and type (jsonb, text): to add what only the statement knows. */
  finish: (data: Prisma.Sql, type: Prisma.Sql) => Prisma.Sql = (data) => data,
): Prisma.Sql {
  checkTypes(events);
  const rows = JSON.stringify(events.map((e) => ({ id: randomUUID(), type: e.type, data: e.data })));
  const reacting = reactionCtes(tenant, events, when);
  return Prisma.sql`
  emit_rows AS (
    SELECT (e.event->>'id')::uuid AS id, e.event->>'type' AS type, e.event->'data' AS data, e.n
    FROM jsonb_array_elements(${rows}::jsonb) WITH ORDINALITY AS e(event, n)),
  emitted AS (
    INSERT INTO events (tenant_id, id, type, data)
    SELECT ${tenant}, r.id, r.type, ${finish(Prisma.sql`r.data`, Prisma.sql`r.type`)} FROM emit_rows r
    WHERE ${when} ORDER BY r.n
    RETURNING tenant_id, id, type, data, created_at),
  queued AS (
    INSERT INTO jobs (queue, payload, group_key)
    SELECT ${EVENTS_DISPATCH_QUEUE}::text, jsonb_build_object('tenant_id', emitted.tenant_id::text, 'event_id', emitted.id::text),
      emitted.tenant_id::text
    FROM emitted JOIN emit_rows r ON r.id = emitted.id ORDER BY r.n
    RETURNING id)${
      reacting.length
        ? Prisma.sql`,
  ${Prisma.join(reacting, ',\n  ')}`
        : Prisma.empty
    }`;
}

/**
 * Events written by a statement from its own rows: `select` answers (type text, data jsonb) rows, in
 * order; `name_rows` gives them their ids and places (materialised: read twice, made once),
 * `name_events` writes them and `name_queued` their dispatch jobs in that order (as emitCtes does). For
 * what only the database knows when the statement runs (the enrolments a reply stops).
 */
export function selectedEventCtes(name: string, tenant: Prisma.Sql, select: Prisma.Sql): Prisma.Sql[] {
  const rows = Prisma.raw(`${name}_rows`);
  return [
    Prisma.sql`${rows} AS MATERIALIZED (
    SELECT gen_random_uuid() AS id, s.type, s.data, row_number() OVER () AS n FROM (${select}) AS s(type, data))`,
    Prisma.sql`${Prisma.raw(`${name}_events`)} AS (
    INSERT INTO events (tenant_id, id, type, data)
    SELECT ${tenant}, r.id, r.type, r.data FROM ${rows} r ORDER BY r.n
    RETURNING id)`,
    Prisma.sql`${Prisma.raw(`${name}_queued`)} AS (
    INSERT INTO jobs (queue, payload, group_key)
    SELECT ${EVENTS_DISPATCH_QUEUE}::text, jsonb_build_object('tenant_id', ${tenant}::text, 'event_id', r.id::text), ${tenant}::text
    FROM ${rows} r ORDER BY r.n
    RETURNING id)`,
  ];
}

/**
 * What a domain does, in the statement that writes some events, when they happen (a cadence stops
 * when its lead writes): common table expressions for that statement, given the events of its types
 * and the statement's condition for writing them. Declared in a domain's manifest (`reactions`), so the
 * domains that emit need not know who reacts.
 */
export interface EventReaction {
  on: readonly EventType[];
  ctes(tenant: Prisma.Sql, events: EventInput[], when: Prisma.Sql): Prisma.Sql[];
}

const reactions: EventReaction[] = [];

/** Called once, from the list of domains (domains/index.ts). */
export function registerReactions(list: readonly EventReaction[]): void {
  reactions.push(...list);
}

function reactionCtes(tenant: Prisma.Sql, events: EventInput[], when: Prisma.Sql): Prisma.Sql[] {
  return reactions.flatMap((reaction) => {
    const matching = events.filter((e) => reaction.on.includes(e.type));
    return matching.length ? reaction.ctes(tenant, matching, when) : [];
  });
}
