// Delivery through a whatsapp_cloud channel to a fake WhatsApp Cloud API on loopback: the request's
// shape and bearer token, a retried server error, final refusals and a channel that is down. The
// access token never appears in an answer, an event or a log line.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { messageDeliveryQueue } from '../../src/domains/messaging/deliver.js';
import { sendThroughChannel } from '../../src/domains/messaging/providers.js';
import { runJobs, type JobRunner } from '../../src/jobs/runner.js';
import { setLogLevel } from '../../src/log.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { inbound, makeChannel, nextMobile, send, waitForMessage } from './helpers.js';

const api = useTestApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
const TOKEN = 'EAAGm0PX4ZCpsBAKZC-super-secret-token';

interface Hit {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}
type Answer = { status: number; body: unknown };

const hits: Hit[] = [];
let answers: Answer[] = [];
let server: http.Server;
let baseUrl: string;
let runner: JobRunner;
const logged: string[] = [];
const writes = { out: process.stdout.write, err: process.stderr.write };

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      hits.push({ path: req.url!, headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      const answer = answers.shift() ?? {
        status: 200,
        body: { messaging_product: 'whatsapp', messages: [{ id: `wamid.${hits.length}` }] },
      };
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v21.0`;
  // Every log line of the file, at the most verbose level, is kept to be searched for the token.
  setLogLevel('debug');
  // Our JSON log lines are kept (not echoed); anything else passes through.
  const capture = (original: typeof process.stdout.write, stream: NodeJS.WriteStream) =>
    ((chunk: unknown, ...rest: unknown[]) =>
      String(chunk).startsWith('{"level"') ? (logged.push(String(chunk)), true) : (original as any).call(stream, chunk, ...rest)) as never;
  process.stdout.write = capture(writes.out, process.stdout);
  process.stderr.write = capture(writes.err, process.stderr);
  runner = await runJobs(api.db, {
    queues: [{ ...messageDeliveryQueue({ db: api.db, config: api.config }), retryDelays: [50] }],
    pollMs: 200,
  });
});

afterAll(async () => {
  await runner?.stop({ timeoutMs: 2_000 });
  process.stdout.write = writes.out;
  process.stderr.write = writes.err;
  setLogLevel('silent');
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  hits.length = 0;
  answers = [];
});

async function setup(apiUrl = baseUrl): Promise<{ org: Org; channel: { id: string }; lead: { id: string; phone: string } }> {
  const org = await api.newOrg();
  const channel = await makeChannel(api, org, {
    name: 'WhatsApp',
    provider: 'whatsapp_cloud',
    config: { api_url: apiUrl, phone_number_id: '109876543210', access_token: TOKEN },
  });
  // The customer writes first: WhatsApp's 24-hour window is open.
  const { lead } = await inbound(api, org, channel.id, nextMobile(), 'Oi', 'Rui');
  return { org, channel, lead };
}

describe('delivery through WhatsApp Cloud', () => {
  it('posts the Cloud API text message with the bearer token and stores the provider’s id', async () => {
    const { org, lead } = await setup();
    const message = await send(api, org.key, { lead_id: lead.id, content: 'Seu pedido saiu para entrega' });
    const sent = await waitForMessage(api, message.id, (m) => m.status === 'sent');
    expect(hits).toHaveLength(1);
    expect(hits[0].path).toBe('/v21.0/109876543210/messages');
    expect(hits[0].headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(hits[0].headers['content-type']).toBe('application/json');
    expect(hits[0].body).toMatchObject({
      messaging_product: 'whatsapp',
      to: lead.phone.slice(1),
      type: 'text',
      text: { body: 'Seu pedido saiu para entrega' },
    });
    expect(sent.provider_message_id).toBe('wamid.1');
  });

  it('retries a server error and then sends', async () => {
    const { org, lead } = await setup();
    answers = [{ status: 500, body: { error: { message: 'Service temporarily unavailable', code: 2 } } }];
    const message = await send(api, org.key, { lead_id: lead.id, content: 'x' });
    const sent = await waitForMessage(api, message.id, (m) => m.status === 'sent');
    expect(hits).toHaveLength(2);
    expect(sent.provider_message_id).toBe('wamid.2');
  });

  it('does not send again a message whose provider id another message of the channel holds', async () => {
    const { org, lead } = await setup();
    const same = { status: 200, body: { messaging_product: 'whatsapp', messages: [{ id: 'wamid.same' }] } };
    answers = [same];
    const first = await send(api, org.key, { lead_id: lead.id, content: 'um' });
    expect((await waitForMessage(api, first.id, (m) => m.status === 'sent')).provider_message_id).toBe('wamid.same');
    answers = [same, same];
    const second = await send(api, org.key, { lead_id: lead.id, content: 'dois' });
    const sent = await waitForMessage(api, second.id, (m) => m.status === 'sent');
    expect(sent.provider_message_id).toBeNull();
    expect(hits.map((h) => h.body.text.body)).toEqual(['um', 'dois']);
    expect(logged.join('')).toContain('not recorded');
  });

  it('records a sent message after a database hiccup without sending it again', async () => {
    const { org, lead } = await setup();
    // The first two tries at recording `sent` of a message reading "hiccup" fail (a sequence is not rolled back).
    await api.db.sql.script(`
      CREATE SEQUENCE hiccups;
      CREATE FUNCTION hiccup() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF nextval('hiccups') <= 2 THEN RAISE EXCEPTION 'hiccup'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER hiccup BEFORE UPDATE ON messages FOR EACH ROW
        WHEN (NEW.content = 'hiccup' AND OLD.status = 'pending' AND NEW.status = 'sent') EXECUTE FUNCTION hiccup();`);
    try {
      const message = await send(api, org.key, { lead_id: lead.id, content: 'hiccup' });
      const sent = await waitForMessage(api, message.id, (m) => m.status === 'sent');
      expect(sent.provider_message_id).toMatch(/^wamid\./);
      expect(hits).toHaveLength(1);
      expect((await api.db.sql.query<{ n: string }>('SELECT last_value::text AS n FROM hiccups'))[0].n).toBe('3');
    } finally {
      await api.db.sql.script('DROP TRIGGER hiccup ON messages; DROP FUNCTION hiccup(); DROP SEQUENCE hiccups;');
    }
  });

  it('marks a refused message failed with the provider’s error, without retrying', async () => {
    const { org, lead } = await setup();
    answers = [{ status: 400, body: { error: { message: '(#131026) Message undeliverable', type: 'OAuthException', code: 131026 } } }];
    const message = await send(api, org.key, { lead_id: lead.id, content: 'x' });
    const failed = await waitForMessage(api, message.id, (m) => m.status === 'failed');
    expect(failed.error).toBe('WhatsApp HTTP 400: (#131026) Message undeliverable (código 131026)');
    expect(hits).toHaveLength(1);
    const history = (await api.rest('GET', `/backend/leads/${lead.id}/messages`, { key: org.key })).body.data;
    expect(history.find((m: { id: string }) => m.id === message.id)).toMatchObject({ status: 'failed', error: failed.error });
  });

  it('marks a message failed after the retries when the provider keeps failing', async () => {
    const { org, lead } = await setup();
    answers = Array.from({ length: 5 }, () => ({ status: 503, body: { error: { message: 'Overloaded' } } }));
    const message = await send(api, org.key, { lead_id: lead.id, content: 'x' });
    const failed = await waitForMessage(api, message.id, (m) => m.status === 'failed');
    expect(hits).toHaveLength(5);
    expect(failed.error).toBe('WhatsApp HTTP 503: Overloaded');
  });

  it('answers at once when the channel is down, and fails the message after the retries', async () => {
    // Nothing listens on this port.
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const { org, lead } = await setup(`http://127.0.0.1:${port}`);
    const started = Date.now();
    const message = await send(api, org.key, { lead_id: lead.id, content: 'x' });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(message.status).toBe('pending');
    const failed = await waitForMessage(api, message.id, (m) => m.status === 'failed');
    expect(failed.error).toMatch(/ECONNREFUSED/);
  });

  it('refuses private addresses unless they are allowed', async () => {
    const outcome = await sendThroughChannel(
      { provider: 'whatsapp_cloud', config: { api_url: baseUrl, phone_number_id: '1', access_token: TOKEN } },
      { phone: '+5511988887777', whatsapp_user_id: null },
      { type: 'text', text: 'x' },
      { allowPrivate: false },
    );
    expect(outcome).toEqual({ kind: 'retry', error: expect.stringMatching(/bloqueada/) });
    expect(hits).toHaveLength(0);
  });

  it('never shows the access token in an answer, an event or a log line', async () => {
    const { org, channel, lead } = await setup();
    const message = await send(api, org.key, { lead_id: lead.id, content: 'x' });
    await waitForMessage(api, message.id, (m) => m.status === 'sent');
    const answers = [
      await api.rest('GET', '/backend/channels', { key: org.key }),
      await api.rest('GET', `/backend/channels/${channel.id}`, { key: org.key }),
      await api.rest('GET', `/backend/leads/${lead.id}/messages`, { key: org.key }),
      await api.rest('GET', '/backend/conversations', { key: org.key }),
      await api.rest('PUT', `/backend/channels/${channel.id}`, {
        key: org.key,
        body: { config: { phone_number_id: '1', access_token: TOKEN, api_url: 'not a url' } },
      }),
    ];
    expect(answers[4].status).toBe(400);
    for (const a of answers) expect(JSON.stringify(a.body)).not.toContain(TOKEN);
    const events = await api.db.sql.query<{ data: unknown }>('SELECT data FROM events WHERE tenant_id = $1', [org.tenantId]);
    expect(events.length).toBeGreaterThan(0);
    expect(JSON.stringify(events)).not.toContain(TOKEN);
    expect(logged.length).toBeGreaterThan(0);
    expect(logged.join('')).not.toContain(TOKEN);
  });
});
