// A server process killed with SIGKILL while a cadence runs: after a restart every enrolment completes,
// each step message exists once (never a second message for a step, never a step skipped) and reaches
// the fake WhatsApp Cloud API. What may repeat is a message the provider took in the instant before
// the kill, before its `sent` was recorded (messages.deliver is at least once at that boundary): the
// test reports and bounds those repeats by the deliveries in flight, never more messages.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, expect, it } from 'vitest';
import { generateApiKey } from '../../src/auth/keys.js';
import { serverDatabase } from '../helpers/database.js';
import { spawnServer } from '../helpers/server-process.js';

const KEY = generateApiKey();
const LEADS = 30;
const cleanup: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
});

/** A fake Cloud API that takes 40 ms per message, so that sends are in flight when the server dies. */
async function slowCloudApi() {
  const bodies: any[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      setTimeout(
        () =>
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ messages: [{ id: `wamid.K${bodies.length}` }] })),
        40,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { bodies, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function start(env: Record<string, string>) {
  const server = await spawnServer({ BOOTSTRAP_API_KEY: KEY, WEBHOOK_ALLOW_PRIVATE_URLS: 'true', ...env });
  await server.listening;
  const base = `http://127.0.0.1:${server.port}`;
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : undefined };
  };
  return { server, call };
}

async function waitUntil(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

it(
  'a server killed with SIGKILL mid-cadence completes every enrolment after a restart, each step message once',
  { timeout: 240_000 },
  async () => {
    const env = serverDatabase('cadences', cleanup);
    const cloud = await slowCloudApi();
    let { server, call } = await start(env);

    const channel = await call('POST', '/backend/channels', {
      name: 'WhatsApp',
      provider: 'whatsapp_cloud',
      config: { api_url: cloud.url, phone_number_id: '1067', access_token: 'token' },
    });
    expect(channel.status, JSON.stringify(channel.body)).toBe(201);
    const templates = ['primeiro', 'segundo', 'terceiro'].map((name, i) => ({
      id: `t${i}`,
      name,
      language: 'pt_BR',
      status: 'APPROVED',
      category: 'MARKETING',
      components: [{ type: 'BODY', text: `Mensagem ${name}` }],
    }));
    expect((await call('POST', '/backend/templates/sync', { app_id: 'app', templates })).status).toBe(200);
    const synced = (await call('GET', '/backend/templates')).body as { id: string; template_name: string }[];
    const idOf = (name: string) => synced.find((t) => t.template_name === name)!.id;
    const cadence = await call('POST', '/backend/cadences', { name: 'Kill', steps: [{ delay_seconds: 0 }, { delay_seconds: 1 }] });
    expect(cadence.status, JSON.stringify(cadence.body)).toBe(201);
    for (const [step, message, name] of [
      [0, 0, 'primeiro'],
      [0, 1, 'segundo'],
      [1, 0, 'terceiro'],
    ] as const) {
      const a = await call('POST', '/backend/templates/cadence-associations', {
        cadence_id: cadence.body.id,
        template_id: idOf(name),
        step_index: step,
        message_index: message,
      });
      expect(a.status, JSON.stringify(a.body)).toBe(201);
    }
    const leads: { id: string; phone: string }[] = [];
    for (let i = 0; i < LEADS; i++) {
      const r = await call('POST', '/backend/leads', { name: `Lead ${i}`, phone: `+5531955${String(500000 + i)}` });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      leads.push(r.body.data);
    }
    const enrolled = await call('POST', `/backend/cadences/${cadence.body.id}/enrolments`, { lead_ids: leads.map((l) => l.id) });
    expect(enrolled.body.enrolled).toHaveLength(LEADS);

    // Killed once the provider has taken some messages, long before all 90.
    await waitUntil('the first sends', () => cloud.bodies.length >= 15);
    server.proc.kill('SIGKILL');
    await server.exited;
    const atKill = cloud.bodies.length;
    expect(atKill).toBeLessThan(LEADS * 3);

    ({ server, call } = await start(env));
    await waitUntil(
      'every enrolment completed',
      async () =>
        (await call('GET', `/backend/cadences/${cadence.body.id}/enrolments?status=completed&limit=1`)).body.pagination.total === LEADS,
    );
    const expected = leads.flatMap((l) => ['primeiro', 'segundo', 'terceiro'].map((t) => `${l.phone.slice(1)} ${t}`)).sort();
    // Every step message exists once, in order, for every lead.
    for (const lead of leads) {
      const history = await call('GET', `/backend/leads/${lead.id}/messages?limit=100`);
      expect(history.body.data.map((m: any) => m.template_id)).toEqual([idOf('primeiro'), idOf('segundo'), idOf('terceiro')]);
    }
    // Each reaches the provider; a repeat is only one taken in the instant of the kill.
    await waitUntil('every delivery', () => new Set(cloud.bodies.map((b) => `${b.to} ${b.template.name}`)).size === expected.length);
    expect([...new Set(cloud.bodies.map((b) => `${b.to} ${b.template.name}`))].sort()).toEqual(expected);
    const repeats = cloud.bodies.length - expected.length;
    console.log(`cadence kill: ${atKill} sends before the kill, ${repeats} repeated at the provider`);
    expect(repeats).toBeLessThanOrEqual(10); // WORKER_CONCURRENCY: the deliveries that can be in flight
    server.proc.kill('SIGTERM');
    await server.exited;
  },
);
