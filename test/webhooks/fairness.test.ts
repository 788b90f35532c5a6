// Deliveries are claimed fairly (decisions.md, "Bounded work"): one organisation's slow receiver holds at
// most 4 delivery slots, and another organisation's event reaches its receiver within a second even
// while 40 of the first one's deliveries wait.
import { describe, expect, it } from 'vitest';
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
