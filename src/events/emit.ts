// The one way to record that something happened in an organisation: `emit` writes the event and queues
// its dispatch in the transaction of the change, so an event exists, and is delivered, exactly when its
// change commits. The webhooks domain handles the EVENTS_DISPATCH_QUEUE jobs.
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import type { TenantTx } from '../db/tenant-scope.js';
import { enqueue } from '../jobs/enqueue.js';

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

export type EventsDispatchPayload = { event_id: string };

/** An interactive transaction of the tenant-scoped client (which supplies the tenant) or of the unscoped one. */
export type EmitClient = Pick<TenantTx, 'event' | '$tenantQuery'> | Pick<PrismaClient, 'event' | '$queryRaw'>;

export async function emit(
  tx: EmitClient,
  type: EventType,
  data: Record<string, unknown>,
  options: { /** Required with the unscoped client; a tenant-scoped client sets its own tenant. */ tenantId?: string } = {},
) {
  // Programming errors, refused before anything is written.
  if (!KNOWN_TYPES.has(type)) throw new Error(`emit: unknown event type "${type}"`);
  if ('$transaction' in tx) throw new Error('emit: call it with the transaction of the change (inside $transaction)');
  const json = data as Prisma.InputJsonValue;
  let event;
  if ('$tenantQuery' in tx) event = await tx.event.create({ data: { type, data: json } });
  else if (options.tenantId) event = await tx.event.create({ data: { type, data: json, tenant_id: options.tenantId } });
  else throw new Error('emit: the unscoped client needs options.tenantId');
  const payload: EventsDispatchPayload = { event_id: event.id };
  await enqueue(tx, EVENTS_DISPATCH_QUEUE, payload);
  return event;
}
