// Deliveries are claimed fairly (decisions.md, "Bounded work"): one organisation's slow receiver holds at
// most 4 delivery slots, and another organisation's event reaches its receiver within a second even
// while 40 of the first one's deliveries wait. Events are fanned out fairly too: another organisation's
// event is dispatched beside one organisation's flood of events, not after it.
import { describe, expect, it } from 'vitest';
import { emitMany } from '../../src/events/emit.js';
import type { Org } from '../helpers/app.js';
import { nextPhone } from '../helpers/factories.js';
import { makeWebhook, ok204, receiver, useWebhookApp, waitFor } from './helpers.js';

const api = useWebhookApp();

async function newLead(org: Org, name: string) {
  const r = await api.rest('POST', '/backend/leads', { key: org.key, body: { name, phone: nextPhone() } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

describe('one organisation’s slow receiver', () => {
  it('holds at most 4 slots and delays another organisation’s delivery by under a second', { timeout: 90_000 }, async () => {
    const a = await api.newOrg('A');
    const b = await api.newOrg('B');
    let inFlight = 0;
    let most = 0;
    const slow = await receiver((_hit, res) => {
      most = Math.max(most, ++inFlight);
      setTimeout(() => {
        inFlight--;
        res.writeHead(200).end();
      }, 3_000);
    });
    const fast = await receiver(ok204);
    await makeWebhook(api, a, { url: slow.url, events: ['lead.created'] });
    await makeWebhook(api, b, { url: fast.url, events: ['lead.created'] });

    for (let i = 0; i < 40; i++) await newLead(a, `A${i}`);
    await waitFor(() => expect(slow.hits.length).toBeGreaterThanOrEqual(4), 10_000);
    const sent = Date.now();
    await newLead(b, 'B');
    const [hit] = await waitFor(() => (expect(fast.hits).toHaveLength(1), fast.hits), 20_000);
    expect(hit.at - sent).toBeLessThan(1_000);
    expect(most).toBeLessThanOrEqual(4);
    expect(most).toBe(4);
  });
});

describe('one organisation’s flood of events', () => {
  it('does not stand in front of another organisation’s event', { timeout: 90_000 }, async () => {
    const a = await api.newOrg('Flood');
    const b = await api.newOrg('Quiet');
    // A's events have no hook to reach: what is measured is their fan-out alone, 200 events at a time.
    const FLOOD = 6_000;
    const waiting = () =>
      api.db.sql.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM jobs WHERE queue = 'events.dispatch' AND payload->>'tenant_id' = $1`,
        [a.tenantId],
      );
    let left: Promise<{ n: number }[]> | undefined;
    const seen = await receiver((hit, res) => {
      left ??= waiting(); // how much of the flood is still to fan out when B's event arrives
      ok204(hit, res);
    });
    await makeWebhook(api, b, { url: seen.url, events: ['lead.created'] });

    await api.db.prisma.$transaction((tx) =>
      emitMany(
        tx,
        Array.from({ length: FLOOD }, (_, n) => ({ type: 'lead.created' as const, data: { n } })),
        { tenantId: a.tenantId },
      ),
    );
    await newLead(b, 'B');
    await waitFor(() => expect(seen.hits).toHaveLength(1), 30_000);
    await waitFor(() => expect(left).toBeDefined(), 5_000);
    const [{ n }] = await left!;
    // First come, first served, B's event would wait for all of A's to be fanned out (none left); with a
    // fan-out of its own beside A's, it goes out with most of the flood still queued.
    expect(n).toBeGreaterThan(FLOOD / 2);
    await waitFor(async () => expect((await waiting())[0].n).toBe(0), 60_000);
  });
});
