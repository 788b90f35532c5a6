// The one way to record that something happened in an organisation: `emit` writes the event and queues
// its dispatch in the transaction of the change, so an event exists, and is delivered, exactly when its
// change commits. The webhooks domain handles the EVENTS_DISPATCH_QUEUE jobs.
import { randomUUID } from 'node:crypto';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import type { TenantTx } from '../db/tenant-scope.js';
import { enqueueMany } from '../jobs/enqueue.js';

/** decisions.md "Events and deliveries". */
export const EVENT_TYPES = [
  'lead.created',
  'lead.updated',
  'lead.status_changed',
  'message.received',
  'message.sent',
  'conversation.created',
  'deal.created',
  'deal.updated',
  'deal.stage_changed',
  'deal.won',
  'deal.lost',
  'deal.deleted',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

const KNOWN_TYPES: ReadonlySet<string> = new Set(EVENT_TYPES);

export const EVENTS_DISPATCH_QUEUE = 'events.dispatch';

/**
 * The organisation rides along so the handler reads the event by its key (tenant_id, id). Absent only
 * from jobs queued by a version before it (processes still running it during a rolling deploy).
 */
export type EventsDispatchPayload = { tenant_id?: string; event_id: string };

/** An interactive transaction of the tenant-scoped client (which supplies the tenant) or of the unscoped one. */
export type EmitClient = Pick<TenantTx, 'event' | '$tenantQuery'> | Pick<PrismaClient, 'event' | '$queryRaw'>;

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

/**
 * The events of one change, in order: one INSERT of events and one of their dispatch jobs, however
 * many there are (a pipeline save that moves a thousand deals).
 */
export async function emitMany(tx: EmitClient, events: EventInput[], options: { tenantId?: string } = {}) {
  // Programming errors, refused before anything is written.
  const unknown = events.find((e) => !KNOWN_TYPES.has(e.type));
  if (unknown) throw new Error(`emit: unknown event type "${unknown.type}"`);
  if ('$transaction' in tx) throw new Error('emit: call it with the transaction of the change (inside $transaction)');
  if (!events.length) return [];
  // Ids made here keep the order of the change without relying on the order INSERT … RETURNING answers in.
  const rows = events.map((e) => ({ id: randomUUID(), type: e.type, data: e.data as Prisma.InputJsonValue }));
  let created;
  if ('$tenantQuery' in tx) created = await tx.event.createManyAndReturn({ data: rows });
  else if (options.tenantId) created = await tx.event.createManyAndReturn({ data: rows.map((r) => ({ ...r, tenant_id: options.tenantId! })) });
  else throw new Error('emit: the unscoped client needs options.tenantId');
  const byId = new Map(created.map((e) => [e.id, e]));
  const payloads: EventsDispatchPayload[] = rows.map((r) => ({ tenant_id: byId.get(r.id)!.tenant_id, event_id: r.id }));
  await enqueueMany(tx, EVENTS_DISPATCH_QUEUE, payloads);
  return rows.map((r) => byId.get(r.id)!);
}

/**
 * `emitMany`'s two inserts as common table expressions, for a write that must stay one statement (an
 * inbound message): `emitted` writes the events (ids made here) when `when` (an SQL condition) holds,
 * `queued` their dispatch jobs. The statement's final SELECT adds `pg_notify(JOBS_CHANNEL, tenant::text)`
 * (as enqueueMany does); data-modifying CTEs run whether or not it reads them.
 */
export function emitCtes(
  tenant: Prisma.Sql,
  events: EventInput[],
  when: Prisma.Sql,
  /** The data as written, from the given data and type (jsonb, text): to add what only the statement knows. */
  finish: (data: Prisma.Sql, type: Prisma.Sql) => Prisma.Sql = (data) => data,
): Prisma.Sql {
  const unknown = events.find((e) => !KNOWN_TYPES.has(e.type));
  if (unknown) throw new Error(`emit: unknown event type "${unknown.type}"`);
  const rows = JSON.stringify(events.map((e) => ({ id: randomUUID(), type: e.type, data: e.data })));
  return Prisma.sql`
  emitted AS (
    INSERT INTO events (tenant_id, id, type, data)
    SELECT ${tenant}, (e.event->>'id')::uuid, e.event->>'type', ${finish(Prisma.sql`(e.event->'data')`, Prisma.sql`(e.event->>'type')`)} FROM jsonb_array_elements(${rows}::jsonb) WITH ORDINALITY AS e(event, n)
    WHERE ${when} ORDER BY e.n
    RETURNING tenant_id, id),
  queued AS (
    INSERT INTO jobs (queue, payload)
    SELECT ${EVENTS_DISPATCH_QUEUE}::text, jsonb_build_object('tenant_id', emitted.tenant_id::text, 'event_id', emitted.id::text) FROM emitted
    RETURNING id)`;
}
