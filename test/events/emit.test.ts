// emit: the event row and its dispatch job are written in the caller's transaction, together or not at
// all; the dispatch job reaches the events.dispatch handler.
import { beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { TenantClients } from '../../src/db/tenant-scope.js';
import { emit, EVENTS_DISPATCH, EVENTS_DISPATCH_QUEUE } from '../../src/events/emit.js';
import type { EventType } from '../../src/events/types.js';
import '../../src/domains/index.js'; // registers the event types, as every entry point does
import { defineQueue } from '../../src/jobs/queue.js';
import { useJobsDatabase } from '../jobs/helpers.js';

const t = useJobsDatabase();
let tenantId: string;
beforeAll(async () => {
  tenantId = (await t.db.prisma.tenant.create({ data: { name: 'Events' } })).id;
});

async function eventsAndJobs() {
  const events = await t.db.prisma.event.findMany({ orderBy: { created_at: 'asc' } });
  const jobs = await t.db.prisma.job.findMany({ where: { queue: EVENTS_DISPATCH_QUEUE } });
  return { events, jobs };
}

describe('emit', () => {
  beforeEach(async () => {
    await t.db.prisma.job.deleteMany({});
    await t.db.prisma.event.deleteMany({});
  });

  it('records the event and its dispatch job in the transaction, with the scoped client’s tenant', async () => {
    const scoped = new TenantClients(t.db.prisma).for(tenantId);
    const event = await scoped.$transaction((tx) => emit(tx, 'lead.created', { id: 'lead-1', name: 'Ana' }));

    const { events, jobs } = await eventsAndJobs();
    expect(events).toEqual([
      { id: event.id, tenant_id: tenantId, type: 'lead.created', data: { id: 'lead-1', name: 'Ana' }, created_at: expect.any(Date) },
    ]);
    expect(jobs.map((j) => j.payload)).toEqual([{ tenant_id: tenantId, event_id: event.id }]);
    // Grouped by organisation, so the dispatch's claims take organisations in turns.
    expect(jobs.map((j) => j.group_key)).toEqual([tenantId]);
  });

  it('takes the tenant from the options on the unscoped client', async () => {
    const event = await t.db.prisma.$transaction((tx) => emit(tx, 'deal.deleted', { id: 'deal-1' }, { tenantId }));
    expect(event).toMatchObject({ tenant_id: tenantId, type: 'deal.deleted' });
  });

  it('writes neither the event nor the job when the transaction rolls back', async () => {
    await expect(
      t.db.prisma.$transaction(async (tx) => {
        await emit(tx, 'deal.won', { id: 'deal-2' }, { tenantId });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(await eventsAndJobs()).toEqual({ events: [], jobs: [] });
  });

  it('refuses an unknown event type, and a call outside a transaction, before writing anything', async () => {
    await expect(t.db.prisma.$transaction((tx) => emit(tx, 'lead.deleted' as EventType, {}, { tenantId }))).rejects.toThrow(
      'emit: unknown event type "lead.deleted"',
    );
    await expect(emit(t.db.prisma, 'lead.created', {}, { tenantId })).rejects.toThrow('inside $transaction');
    expect(await eventsAndJobs()).toEqual({ events: [], jobs: [] });
  });

  it('hands the committed event to the events.dispatch handler', async () => {
    const dispatched: unknown[] = [];
    await t.runner({
      queues: [
        defineQueue({
          name: EVENTS_DISPATCH,
          fairness: { perKey: 1 },
          batch: { size: 10, handler: async (jobs) => jobs.map(({ payload }) => (dispatched.push(payload), 'done' as const)) },
        }),
      ],
    });
    const event = await t.db.prisma.$transaction((tx) => emit(tx, 'deal.stage_changed', { id: 'deal-3' }, { tenantId }));

    await vi.waitFor(() => expect(dispatched).toEqual([{ tenant_id: tenantId, event_id: event.id }]), { timeout: 10_000 });
  });
});
