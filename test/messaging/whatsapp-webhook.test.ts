// The WhatsApp Cloud webhook of a channel: the verification challenge, and signed payloads in the
// provider's documented shape (entry[].changes[].value.messages[] / .statuses[]) replayed as the
// provider sends them, signed and forged.
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageDeliveryQueue } from '../../src/domains/messaging/deliver.js';
import { runJobs, type JobRunner } from '../../src/jobs/runner.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { eventTypes, inbound, makeChannel, makeDepartment, nextMobile, send, waitForMessage } from './helpers.js';

const api = useTestApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
const APP_SECRET = 'whatsapp-app-secret-42';
const PHONE_NUMBER_ID = '106540352242922';

let provider: http.Server;
let apiUrl: string;
let runner: JobRunner;
let wamids = 0;

beforeAll(async () => {
  // A fake Graph API that accepts every send.
  provider = http.createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ messaging_product: 'whatsapp', messages: [{ id: `wamid.OUT${++wamids}` }] })),
    );
  });
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  apiUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
  runner = await runJobs(api.db, {
    queues: [{ ...messageDeliveryQueue({ db: api.db, config: api.config }), retryDelays: [50] }],
    pollMs: 200,
  });
});

afterAll(async () => {
  await runner?.stop({ timeoutMs: 2_000 });
  provider.closeAllConnections();
  await new Promise((resolve) => provider.close(resolve));
});

async function whatsappChannel(org: Org, config: Record<string, unknown> = {}) {
  return makeChannel(api, org, {
    name: 'WhatsApp',
    provider: 'whatsapp_cloud',
    config: {
      api_url: apiUrl,
      phone_number_id: PHONE_NUMBER_ID,
      access_token: 'token',
      app_secret: APP_SECRET,
      verify_token: 'meu-token-de-verificacao',
      ...config,
    },
  });
}

/** The provider's notification envelope around one change value. */
function notification(value: Record<string, unknown>) {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '102290129340398',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550783881', phone_number_id: PHONE_NUMBER_ID },
              ...value,
            },
          },
        ],
      },
    ],
  };
}

function inboundPayload(
  messages: { from: string; id: string; name?: string; text?: string; type?: string; extra?: Record<string, unknown> }[],
) {
  return notification({
    contacts: messages.map((m) => ({ profile: { name: m.name ?? 'Contato' }, wa_id: m.from })),
    messages: messages.map((m) => ({
      from: m.from,
      id: m.id,
      timestamp: String(Math.floor(Date.now() / 1000)),
      type: m.type ?? 'text',
      ...(m.text !== undefined ? { text: { body: m.text } } : {}),
      ...m.extra,
    })),
  });
}

const sign = (body: string, secret = APP_SECRET) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

async function post(channelId: string, payload: unknown, signature?: string | null, rawBody?: string) {
  const body = rawBody ?? JSON.stringify(payload);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const sig = signature === undefined ? sign(body) : signature;
  if (sig !== null) headers['x-hub-signature-256'] = sig;
  const response = await api.raw(`/backend/channels/${channelId}/whatsapp`, { method: 'POST', headers, body });
  return { status: response.status, body: await response.json() };
}

async function stored(tenantId: string) {
  const [row] = await api.db.sql.query<{ leads: number; messages: number }>(
    'SELECT (SELECT count(*)::int FROM leads WHERE tenant_id = $1) AS leads, (SELECT count(*)::int FROM messages WHERE tenant_id = $1) AS messages',
    [tenantId],
  );
  return row;
}

describe('WhatsApp Cloud webhook verification', () => {
  it('answers hub.challenge when the verify token matches, else 403', async () => {
    const org = await api.newOrg();
    const channel = await whatsappChannel(org);
    const verify = (query: string, id = channel.id) => api.raw(`/backend/channels/${id}/whatsapp?${query}`);
    const ok = await verify('hub.mode=subscribe&hub.verify_token=meu-token-de-verificacao&hub.challenge=1158201444');
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await ok.text()).toBe('1158201444');
    for (const query of [
      'hub.mode=subscribe&hub.verify_token=errado&hub.challenge=1',
      'hub.mode=unsubscribe&hub.verify_token=meu-token-de-verificacao&hub.challenge=1',
      'hub.mode=subscribe&hub.challenge=1',
      'hub.mode=subscribe&hub.verify_token=meu-token-de-verificacao',
    ]) {
      const r = await verify(query);
      expect(r.status, query).toBe(403);
      expect((await r.json()).error.code).toBe('FORBIDDEN');
    }
    const noToken = await whatsappChannel(org, { verify_token: undefined });
    expect((await verify('hub.mode=subscribe&hub.verify_token=&hub.challenge=1', noToken.id)).status).toBe(403);
    const test = await makeChannel(api, org);
    expect((await verify('hub.mode=subscribe&hub.verify_token=x&hub.challenge=1', test.id)).status).toBe(404);
    expect((await verify('hub.mode=subscribe&hub.verify_token=x&hub.challenge=1', '00000000-0000-4000-8000-000000000000')).status).toBe(
      404,
    );
    expect((await verify('hub.mode=subscribe&hub.verify_token=x&hub.challenge=1', 'nope')).status).toBe(404);
  });
});

describe('WhatsApp Cloud webhook notifications', () => {
  it('stores signed inbound messages like the inbound route, once however often the provider resends them', async () => {
    const org = await api.newOrg();
    const channel = await whatsappChannel(org);
    const ana = nextMobile().slice(1);
    const bento = nextMobile().slice(1);
    const payload = inboundPayload([
      { from: ana, id: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=', name: 'Ana Souza', text: 'Bom dia!' },
      {
        from: bento,
        id: 'wamid.IMAGE1',
        name: 'Bento',
        type: 'image',
        extra: { image: { caption: 'Foto do produto', mime_type: 'image/jpeg', id: '1', sha256: 'x' } },
      },
    ]);
    const r = await post(channel.id, payload);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, data: { messages: 2, statuses: 0 } });

    const leads = (await api.rest('GET', '/backend/leads', { key: org.key })).body.data;
    expect(leads.map((l: { name: string; phone: string }) => [l.name, l.phone]).sort()).toEqual([
      ['Ana Souza', `+${ana}`],
      ['Bento', `+${bento}`],
    ]);
    const conversations = (await api.rest('GET', '/backend/conversations', { key: org.key })).body.data;
    expect(conversations).toHaveLength(2);
    const anaLead = leads.find((l: { name: string }) => l.name === 'Ana Souza');
    const history = (await api.rest('GET', `/backend/leads/${anaLead.id}/messages`, { key: org.key })).body.data;
    expect(history).toEqual([
      expect.objectContaining({
        content: 'Bom dia!',
        role: 'user',
        status: 'received',
        type: 'text',
        provider_message_id: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=',
        channel_id: channel.id,
      }),
    ]);
    const bentoLead = leads.find((l: { name: string }) => l.name === 'Bento');
    expect((await api.rest('GET', `/backend/leads/${bentoLead.id}/messages`, { key: org.key })).body.data[0]).toMatchObject({
      content: 'Foto do produto',
      type: 'image',
    });
    expect((await eventTypes(api, org.tenantId)).sort()).toEqual([
      'conversation.created',
      'conversation.created',
      'lead.created',
      'lead.created',
      'message.received',
      'message.received',
    ]);

    // The provider resends the same notification: nothing changes.
    const again = await post(channel.id, payload);
    expect(again.body.data).toEqual({ messages: 0, statuses: 0 });
    expect(await stored(org.tenantId)).toEqual({ leads: 2, messages: 2 });
    expect(
      ((await api.rest('GET', '/backend/conversations', { key: org.key })).body.data as { unread_count: number }[]).map(
        (c) => c.unread_count,
      ),
    ).toEqual([1, 1]);
  });

  it('refuses forged, missing or stale signatures with 401 and stores nothing', async () => {
    const org = await api.newOrg();
    const channel = await whatsappChannel(org);
    const payload = inboundPayload([{ from: nextMobile().slice(1), id: 'wamid.FORGED', text: 'oi' }]);
    const body = JSON.stringify(payload);
    const tampered = body.replace('oi', 'tchau');
    for (const [signature, raw] of [
      [null, body],
      ['', body],
      [sign(body, 'outro-segredo'), body],
      [sign(body).replace('sha256=', 'sha1='), body],
      ['sha256=' + '0'.repeat(64), body],
      [sign(body), tampered],
    ] as const) {
      const r = await post(channel.id, undefined, signature, raw);
      expect(r.status, String(signature)).toBe(401);
      expect(r.body.error.code).toBe('UNAUTHORIZED');
    }
    // A channel without an app secret cannot verify anything.
    const unsigned = await whatsappChannel(org, { app_secret: undefined });
    expect((await post(unsigned.id, payload)).status).toBe(401);
    expect(await stored(org.tenantId)).toEqual({ leads: 0, messages: 0 });
    expect(await eventTypes(api, org.tenantId)).toEqual([]);
    // A signed body that is not JSON, or not a notification, is a 400.
    expect((await post(channel.id, undefined, sign('not json'), 'not json')).status).toBe(400);
    expect((await post(channel.id, { object: 'whatsapp_business_account' })).status).toBe(400);
  });

  it('ignores changes for another phone number of the same app', async () => {
    const org = await api.newOrg();
    const channel = await whatsappChannel(org);
    const payload = inboundPayload([{ from: nextMobile().slice(1), id: 'wamid.OTHER', text: 'oi' }]);
    payload.entry[0].changes[0].value.metadata.phone_number_id = '999';
    expect((await post(channel.id, payload)).body.data).toEqual({ messages: 0, statuses: 0 });
    expect(await stored(org.tenantId)).toEqual({ leads: 0, messages: 0 });
  });

  it('moves sent messages forward with the provider’s statuses', async () => {
    const org = await api.newOrg();
    const channel = await whatsappChannel(org);
    // The customer writes first: WhatsApp's 24-hour window is open.
    const { lead } = await inbound(api, org, channel.id, nextMobile(), 'Oi', 'Caio');
    const first = await send(api, org.key, { lead_id: lead.id, content: 'Primeira' });
    const second = await send(api, org.key, { lead_id: lead.id, content: 'Segunda' });
    const a = await waitForMessage(api, first.id, (m) => m.status === 'sent');
    const b = await waitForMessage(api, second.id, (m) => m.status === 'sent');
    const statuses = (list: { id: string; status: string; errors?: unknown[] }[]) =>
      notification({
        statuses: list.map((s) => ({ ...s, timestamp: String(Math.floor(Date.now() / 1000)), recipient_id: lead.phone.slice(1) })),
      });

    const r = await post(
      channel.id,
      statuses([
        { id: a.provider_message_id!, status: 'delivered' },
        { id: a.provider_message_id!, status: 'read' },
        {
          id: b.provider_message_id!,
          status: 'failed',
          errors: [{ code: 131047, title: 'Re-engagement message', error_data: { details: 'More than 24 hours have passed' } }],
        },
        { id: 'wamid.UNKNOWN', status: 'delivered' },
      ]),
    );
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ messages: 0, statuses: 3 });
    expect((await waitForMessage(api, first.id, () => true)).status).toBe('read');
    expect(await waitForMessage(api, second.id, () => true)).toMatchObject({
      status: 'failed',
      error: '(#131047) Re-engagement message: More than 24 hours have passed',
    });
    // Late and out-of-order reports never move a message backwards.
    await post(
      channel.id,
      statuses([
        { id: a.provider_message_id!, status: 'delivered' },
        { id: a.provider_message_id!, status: 'sent' },
      ]),
    );
    expect((await waitForMessage(api, first.id, () => true)).status).toBe('read');
    // Forged status reports change nothing.
    expect((await post(channel.id, statuses([{ id: b.provider_message_id!, status: 'read' }]), sign('x'))).status).toBe(401);
  });
});

describe('a batch with malformed parts', () => {
  it('stores the good messages and skips each malformed message and status, answering 200', async () => {
    const org = await api.newOrg();
    const channel = await whatsappChannel(org);
    const [good1, good2, bad] = [nextMobile().slice(1), nextMobile().slice(1), nextMobile().slice(1)];
    const payload = notification({
      contacts: [
        { wa_id: good1, profile: { name: 'Ana' } },
        { wa_id: good2, profile: { name: 'Bi\u0000a' } },
      ],
      messages: [
        { from: good1, id: 'wamid.GOOD1', type: 'text', text: { body: 'primeira' } },
        { from: Number(bad), id: 'wamid.NUMBER', type: 'text', text: { body: 'remetente numérico' } },
        { from: bad, id: 'wamid.NUL', type: 'text', text: { body: 'com \u0000 nulo' } },
        { from: bad, id: 'wamid.SURROGATE', type: 'text', text: { body: 'metade \ud83d de emoji' } },
        { from: bad, id: 'wamid.BODY', type: 'text', text: { body: 42 } },
        { from: bad, id: 77, type: 'text', text: { body: 'id numérico' } },
        { from: bad, id: 'wamid.CAPTION', type: 'image', image: { id: 'media', caption: ['x'] } },
        null,
        'texto solto',
        // A well-formed message whose sender's name is not text: stored, named by its phone.
        { from: good2, id: 'wamid.GOOD2', type: 'text', text: { body: 'segunda 😀' } },
      ],
      statuses: [{ id: 12, status: 'delivered' }, { id: 'wamid.X', status: 'read', errors: 'nope' }, null],
    });
    const r = await post(channel.id, payload);
    expect(r).toEqual({ status: 200, body: { success: true, data: { messages: 2, statuses: 0 } } });
    const rows = await api.db.prisma.message.findMany({
      where: { tenant_id: org.tenantId },
      select: { content: true, provider_message_id: true },
      orderBy: { created_at: 'asc' },
    });
    expect(rows).toEqual([
      { content: 'primeira', provider_message_id: 'wamid.GOOD1' },
      { content: 'segunda 😀', provider_message_id: 'wamid.GOOD2' },
    ]);
    expect(await stored(org.tenantId)).toEqual({ leads: 2, messages: 2 });
  });
});

describe('a channel or department deleted while messages arrive', () => {
  it('never answers 500: each message is stored, or skipped once the channel is gone', { timeout: 60_000 }, async () => {
    const org = await api.newOrg();
    for (const target of ['department', 'channel'] as const) {
      const department = await makeDepartment(api, org, `Vendas ${target}`);
      const channel = await whatsappChannel(org, {});
      const moved = await api.rest('PUT', `/backend/channels/${channel.id}`, { key: org.key, body: { department_id: department.id } });
      expect(moved.status).toBe(204);
      // Four senders at a time (more would only measure how long transactions wait for a connection).
      const statuses: number[] = [];
      let sent = 0;
      const sender = async () => {
        for (let i = sent++; i < 24; i = sent++) {
          const r = await post(
            channel.id,
            inboundPayload([{ from: nextMobile().slice(1), id: `wamid.RACE.${target}.${i}`, text: `mensagem ${i}` }]),
          );
          statuses.push(r.status);
        }
      };
      const posts = Array.from({ length: 4 }, sender);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const path = target === 'department' ? `/backend/departments/${department.id}` : `/backend/channels/${channel.id}`;
      const deleted = await api.rest('DELETE', path, { key: org.key });
      expect(deleted.status, JSON.stringify(deleted.body)).toBe(204);
      await Promise.all(posts);
      expect(
        statuses.filter((s) => s !== 200 && s !== 404),
        `${target}: ${statuses.join(',')}`,
      ).toEqual([]);
    }
  });
});
