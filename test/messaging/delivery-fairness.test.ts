// Outbound messages are claimed fairly: one organisation's campaign to a slow provider holds at most half
// of the job slots (deliveriesPerOrganisation), and another organisation's message is sent at once
// beside it, claimed in its turn rather than behind the backlog.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveriesPerOrganisation, messageDeliveryQueue } from '../../src/domains/messaging/deliver.js';
import { runJobs, type JobRunner } from '../../src/jobs/runner.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { inbound, makeChannel, nextMobile, send, waitForMessage } from './helpers.js';

const api = useTestApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
const SLOW_MS = 2_000;

/** A WhatsApp Cloud API on loopback; `slow` answers after SLOW_MS. Counts the requests in flight per path. */
function provider(slow: boolean) {
  const hits: { at: number }[] = [];
  const state = { inFlight: 0, most: 0 };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hits.push({ at: Date.now() });
      const id = `wamid.${hits.length}`;
      state.most = Math.max(state.most, ++state.inFlight);
      setTimeout(
        () => {
          state.inFlight--;
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ messages: [{ id }] }));
        },
        slow ? SLOW_MS : 0,
      );
    });
  });
  return { server, hits, state };
}

const slow = provider(true);
const fast = provider(false);
let runner: JobRunner;

beforeAll(async () => {
  for (const p of [slow, fast]) await new Promise<void>((resolve) => p.server.listen(0, '127.0.0.1', resolve));
  runner = await runJobs(api.db, { queues: [messageDeliveryQueue({ db: api.db, config: api.config })], concurrency: 10, pollMs: 200 });
});

afterAll(async () => {
  await runner?.stop({ timeoutMs: 5_000 });
  for (const p of [slow, fast]) {
    p.server.closeAllConnections();
    await new Promise((resolve) => p.server.close(resolve));
  }
});

async function setup(p: ReturnType<typeof provider>): Promise<{ org: Org; lead: { id: string } }> {
  const org = await api.newOrg();
  const apiUrl = `http://127.0.0.1:${(p.server.address() as AddressInfo).port}/v21.0`;
  const channel = await makeChannel(api, org, {
    name: 'WhatsApp',
    provider: 'whatsapp_cloud',
    config: { api_url: apiUrl, phone_number_id: '109876543210', access_token: 'token' },
  });
  // The customer writes first: WhatsApp's 24-hour window is open.
  const { lead } = await inbound(api, org, channel.id, nextMobile(), 'Oi', 'Rui');
  return { org, lead };
}

describe('one organisation’s campaign to a slow provider', () => {
  it('holds at most half of the slots and delays another organisation’s message by under a second', { timeout: 60_000 }, async () => {
    const cap = deliveriesPerOrganisation(api.config);
    expect(cap).toBe(5);
    const a = await setup(slow);
    const b = await setup(fast);
    const campaign = [];
    for (let i = 0; i < 20; i++) campaign.push(await send(api, a.org.key, { lead_id: a.lead.id, content: `oferta ${i}` }));
    const deadline = Date.now() + 10_000;
    while (slow.state.inFlight < cap && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const sent = Date.now();
    const message = await send(api, b.org.key, { lead_id: b.lead.id, content: 'Olá' });
    await waitForMessage(api, message.id, (m) => m.status === 'sent');
    expect(fast.hits).toHaveLength(1);
    expect(fast.hits[0].at - sent).toBeLessThan(1_000);
    // A's campaign still waits: at most `cap` of its messages at once, and it reached the cap.
    await waitForMessage(api, campaign.at(-1)!.id, (m) => m.status === 'sent', 30_000);
    expect(slow.state.most).toBe(cap);
    expect(slow.hits).toHaveLength(20);
  });
});
