// POST /backend/messages/send-media over real multipart bodies: the message stored `pending` with its
// file (streamed into storage like an upload, judged by its bytes) and served by the public media
// proxy; delivery by the job runner to a fake WhatsApp Cloud API on loopback, which is handed the
// file's link; every refusal (400, 404, 413, 502) leaves no file and no record; the visibility policy
// as for send; tenant isolation; the start-up sweep keeps media files; the same operation on /graphql.
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { print } from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { messageDeliveryQueue } from '../../src/domains/messaging/deliver.js';
import { sweepOrphanFiles } from '../../src/domains/uploads/sweep.js';
import { runJobs, type JobRunner } from '../../src/jobs/runner.js';
import { graphql } from '../gql/index.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { patternBytes } from '../storage/files.js';
import { KEY_URL, keyOf, PNG } from '../uploads/helpers.js';
import { useTestStore } from '../helpers/storage.js';
import { addMember, eventTypes, inbound, makeChannel, makeDepartment, makeUser, nextMobile, waitForMessage } from './helpers.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'funil-send-media-'));
// The run's store: this directory, or a bucket (TEST_STORAGE=s3).
const store = useTestStore(undefined, root);
const api = useTestApp(() => ({ ...store.env, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }));
const TOKEN = 'EAAGm0PX4ZCpsBAKZC-media-token';

/** An Ogg Opus voice note's first page (what content sniffing reads). */
const OPUS = (() => {
  const b = new Uint8Array(64);
  b.set(new TextEncoder().encode('OggS'), 0);
  b[5] = 2;
  b[26] = 1;
  b[27] = 19;
  b.set(new TextEncoder().encode('OpusHead'), 28);
  b[36] = 1;
  b[37] = 1;
  return b;
})();
const PDF = new TextEncoder().encode('%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n');

interface Hit {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}
const hits: Hit[] = [];
let provider: http.Server;
let providerUrl: string;
let runner: JobRunner;

beforeAll(async () => {
  provider = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      hits.push({ path: req.url!, headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ messaging_product: 'whatsapp', messages: [{ id: `wamid.media.${hits.length}` }] }));
    });
  });
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  providerUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v21.0`;
  runner = await runJobs(api.db, {
    queues: [{ ...messageDeliveryQueue({ db: api.db, config: api.config }), retryDelays: [50] }],
    pollMs: 200,
  });
});

afterAll(async () => {
  await runner?.stop({ timeoutMs: 2_000 });
  provider.closeAllConnections();
  await new Promise((resolve) => provider.close(resolve));
  fs.rmSync(root, { recursive: true, force: true });
});

beforeEach(() => {
  hits.length = 0;
});

type FilePart = { bytes: Uint8Array; name?: string; type?: string };

function mediaForm(fields: Record<string, string>, file: FilePart | null = { bytes: PNG, name: 'foto.png', type: 'image/png' }): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  if (file)
    form.append(
      'file',
      new Blob([file.bytes as Uint8Array<ArrayBuffer>], { type: file.type ?? 'application/octet-stream' }),
      file.name ?? 'arquivo.bin',
    );
  return form;
}

const sendMedia = (key: string, fields: Record<string, string>, file?: FilePart | null) =>
  api.rest('POST', '/backend/messages/send-media', { key, body: mediaForm(fields, file) });

/** Rows of an organisation that a refused request must not have added. */
async function counts(tenantId: string) {
  const [row] = await api.db.sql.query<{ leads: number; conversations: number; messages: number; jobs: number; events: number }>(
    `SELECT (SELECT count(*)::int FROM leads WHERE tenant_id = $1) AS leads,
            (SELECT count(*)::int FROM conversations WHERE tenant_id = $1) AS conversations,
            (SELECT count(*)::int FROM messages WHERE tenant_id = $1) AS messages,
            (SELECT count(*)::int FROM jobs WHERE queue = 'messages.deliver' AND payload->>'tenant_id' = $1::text) AS jobs,
            (SELECT count(*)::int FROM events WHERE tenant_id = $1) AS events`,
    [tenantId],
  );
  return row;
}

/** Runs `fn` and checks that it left storage and the organisation's rows exactly as they were. */
async function leavesNothing(org: Org, fn: () => Promise<unknown>) {
  // An earlier send's delivery job is removed just after its message shows `sent`: start from the state
  // once it is gone, so a job ending meanwhile is not taken for a change the refused requests made.
  const settled = Date.now() + 30_000;
  while ((await counts(org.tenantId)).jobs > 0 && Date.now() < settled) await new Promise((r) => setTimeout(r, 50));
  const files = await store.contents();
  const before = await counts(org.tenantId);
  await fn();
  expect(await store.contents()).toEqual(files);
  expect(await counts(org.tenantId)).toEqual(before);
}

async function proxied(mediaUrl: string) {
  const res = await api.raw(new URL(mediaUrl).pathname);
  return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) };
}

describe('POST /backend/messages/send-media', () => {
  it('stores the message pending with its file, creates the lead and the conversation, delivers it and serves the file', async () => {
    const org = await api.newOrg();
    const dept = await makeDepartment(api, org, 'Vendas');
    const channel = await makeChannel(api, org, { department_id: dept.id });
    const phone = nextMobile();
    const r = await sendMedia(org.key, {
      channel_id: channel.id,
      remote_jid: `${phone.slice(1)}@s.whatsapp.net`,
      message_type: 'image',
      content: 'Seu catálogo',
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({
      success: true,
      data: {
        id: expect.any(String),
        lead_id: expect.any(String),
        conversation_id: expect.any(String),
        channel_id: channel.id,
        content: 'Seu catálogo',
        type: 'image',
        role: 'assistant',
        status: 'pending',
        error: null,
        provider_message_id: null,
        media_url: expect.stringMatching(KEY_URL),
        template_id: null,
        timestamp: expect.any(String),
      },
    });
    const message = r.body.data;
    expect(await store.read(keyOf(message.media_url))).toEqual(Buffer.from(PNG));
    // The lead was created from the phone, with a conversation in the channel's department.
    const lead = (await api.rest('GET', `/backend/leads/${message.lead_id}`, { key: org.key })).body.data;
    expect(lead).toMatchObject({ phone, name: phone });
    const conversation = (await api.rest('GET', `/backend/conversations/${message.conversation_id}`, { key: org.key })).body.data;
    expect(conversation).toMatchObject({
      department_id: dept.id,
      channel_id: channel.id,
      unread_count: 0,
      last_message: { content: 'Seu catálogo', role: 'assistant' },
    });

    // The job sends it through the test channel; the history shows it.
    const sent = await waitForMessage(api, message.id, (m) => m.status === 'sent');
    expect(sent.provider_message_id).toMatch(/^test-/);
    expect((await api.rest('GET', `/backend/leads/${lead.id}/messages`, { key: org.key })).body.data).toEqual([
      { ...message, status: 'sent', provider_message_id: sent.provider_message_id },
    ]);
    expect((await eventTypes(api, org.tenantId)).sort()).toEqual(['conversation.created', 'lead.created', 'message.sent']);
    const [sentEvent] = await api.db.sql.query<{ data: any }>(`SELECT data FROM events WHERE tenant_id = $1 AND type = 'message.sent'`, [
      org.tenantId,
    ]);
    expect(sentEvent.data).toMatchObject({ id: message.id, type: 'image', media_url: message.media_url, status: 'sent' });

    // The public media proxy serves the file, with no key.
    const served = await proxied(message.media_url);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(served.headers.get('cache-control')).toBe('public, max-age=86400');
    expect(served.headers.get('access-control-allow-origin')).toBe('*');
    expect(served.bytes).toEqual(PNG);

    // The same phone, written differently, is the same lead and the same open conversation.
    const again = await sendMedia(
      org.key,
      { channel_id: channel.id, remote_jid: phone, message_type: 'document' },
      { bytes: PDF, name: 'proposta comercial.pdf', type: 'application/pdf' },
    );
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ lead_id: lead.id, conversation_id: conversation.id, type: 'document', content: '' });
    expect((await proxied(again.body.data.media_url)).headers.get('content-type')).toBe('application/pdf');
  });

  it('judges the file by its content: each type accepts its formats, a document any file', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    const phone = nextMobile();
    const ok = async (message_type: string, file: FilePart) => {
      const r = await sendMedia(org.key, { channel_id: channel.id, remote_jid: phone, message_type }, file);
      expect(r.status, `${message_type}: ${JSON.stringify(r.body)}`).toBe(200);
      // Delivered before the next step counts rows (the job and its event come in the background).
      await waitForMessage(api, r.body.data.id, (m) => m.status === 'sent');
      return r.body.data;
    };
    // A PNG named and declared as a PDF is an image.
    await ok('image', { bytes: PNG, name: 'documento.pdf', type: 'application/pdf' });
    const voice = await ok('audio', { bytes: OPUS, name: 'nota.ogg', type: 'audio/ogg' });
    expect((await proxied(voice.media_url)).headers.get('content-type')).toBe('audio/ogg; codecs=opus');
    await ok('document', { bytes: PNG, name: 'foto.png' });

    await leavesNothing(org, async () => {
      for (const [message_type, file] of [
        ['image', { bytes: PDF, name: 'foto.jpg', type: 'image/jpeg' }],
        ['audio', { bytes: PNG, name: 'nota.ogg', type: 'audio/ogg' }],
        ['video', { bytes: OPUS, name: 'video.mp4', type: 'video/mp4' }],
        ['image', { bytes: new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"></svg>'), name: 'x.png', type: 'image/png' }],
        ['document', { bytes: new Uint8Array(0), name: 'vazio.pdf' }],
      ] as const) {
        const r = await sendMedia(org.key, { channel_id: channel.id, remote_jid: phone, message_type }, file);
        expect(r.status, message_type).toBe(400);
        expect(r.body.error.code).toBe('VALIDATION_ERROR');
      }
    });
  });

  it('answers 400 for a missing file or bad fields, INVALID_PHONE for a remote_jid that is not a phone, leaving nothing', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    const fields = { channel_id: channel.id, remote_jid: nextMobile(), message_type: 'image' };
    await leavesNothing(org, async () => {
      const missing = await sendMedia(org.key, fields, null);
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({
        success: false,
        error: {
          code: 'VALIDATION_ERROR',
          message: expect.stringContaining('file'),
          details: [{ field: 'file', message: expect.any(String) }],
        },
      });
      const notMultipart = await api.rest('POST', '/backend/messages/send-media', { key: org.key, body: fields });
      expect(notMultipart.status).toBe(400);

      for (const bad of [
        { channel_id: undefined },
        { channel_id: 'nope' },
        { remote_jid: undefined },
        { message_type: undefined },
        { message_type: 'sticker' },
        { message_type: 'text' },
        { content: 'x'.repeat(1025) },
      ]) {
        const form = Object.fromEntries(Object.entries({ ...fields, ...bad }).filter(([, v]) => v !== undefined)) as Record<string, string>;
        const r = await sendMedia(org.key, form);
        expect(r.status, JSON.stringify(bad)).toBe(400);
        expect(r.body.error.code, JSON.stringify(bad)).toBe('VALIDATION_ERROR');
      }
      const audioCaption = await sendMedia(org.key, { ...fields, message_type: 'audio', content: 'ouça' }, { bytes: OPUS, name: 'a.ogg' });
      expect(audioCaption.status).toBe(400);

      for (const remote_jid of ['abc', '1234567', '+5511123', '551199999999999999', '120363025246125486@g.us', '+00 11 98888-7777']) {
        const r = await sendMedia(org.key, { ...fields, remote_jid });
        expect(r.status, remote_jid).toBe(400);
        expect(r.body.error.code, remote_jid).toBe('INVALID_PHONE');
      }
    });
    // The caption limit is 1,024 characters.
    expect((await sendMedia(org.key, { ...fields, content: 'x'.repeat(1024) })).status).toBe(200);
  });

  it('answers 413 past 10 MB, leaving nothing', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    await leavesNothing(org, async () => {
      const r = await sendMedia(
        org.key,
        { channel_id: channel.id, remote_jid: nextMobile(), message_type: 'document' },
        { bytes: patternBytes(10 * 1024 * 1024 + 1), name: 'grande.bin' },
      );
      expect(r.status).toBe(413);
      expect(r.body).toEqual({ success: false, error: { code: 'PAYLOAD_TOO_LARGE', message: expect.any(String) } });
    });
  });

  it('answers CHANNEL_ERROR (502) for an unknown, inactive or another organisation’s channel, leaving nothing', async () => {
    const org = await api.newOrg();
    const other = await api.newOrg();
    const theirs = await makeChannel(api, other);
    const inactive = await makeChannel(api, org, { active: false });
    await leavesNothing(org, async () => {
      for (const channel_id of [theirs.id, inactive.id, '00000000-0000-4000-8000-000000000000']) {
        const r = await sendMedia(org.key, { channel_id, remote_jid: nextMobile(), message_type: 'image' });
        expect(r.status, channel_id).toBe(502);
        expect(r.body.error.code).toBe('CHANNEL_ERROR');
      }
    });
    expect(await counts(other.tenantId)).toMatchObject({ leads: 0, messages: 0 });
  });

  it('keeps organisations apart: another organisation’s lead with the same phone is neither found nor touched', async () => {
    const org = await api.newOrg();
    const other = await api.newOrg();
    const phone = nextMobile();
    const theirLead = (await api.rest('POST', '/backend/leads', { key: other.key, body: { name: 'Deles', phone } })).body.data;
    const channel = await makeChannel(api, org);
    const r = await sendMedia(org.key, { channel_id: channel.id, remote_jid: phone, message_type: 'image' });
    expect(r.status).toBe(200);
    expect(r.body.data.lead_id).not.toBe(theirLead.id);
    expect((await api.rest('GET', `/backend/leads/${r.body.data.lead_id}`, { key: org.key })).body.data.phone).toBe(phone);
    expect((await api.rest('GET', `/backend/leads/${r.body.data.lead_id}`, { key: other.key })).status).toBe(404);
    expect(await counts(other.tenantId)).toMatchObject({ leads: 1, conversations: 0, messages: 0 });
    expect((await api.rest('GET', `/backend/leads/${theirLead.id}/messages`, { key: other.key })).body.data).toEqual([]);
  });

  it('applies the visibility policy: an operator writes only into conversations it can see (404 otherwise, nothing stored)', async () => {
    const org = await api.newOrg();
    const sales = await makeDepartment(api, org, 'Vendas');
    const support = await makeDepartment(api, org, 'Suporte');
    const operator = await makeUser(api, org, 'operator');
    await addMember(api, org, support.id, operator.id);
    const salesChannel = await makeChannel(api, org, { department_id: sales.id });
    const supportChannel = await makeChannel(api, org, { department_id: support.id });
    const openChannel = await makeChannel(api, org);

    // A new conversation would get the channel's department, which the operator is not in.
    await leavesNothing(org, async () => {
      const r = await sendMedia(operator.key, { channel_id: salesChannel.id, remote_jid: nextMobile(), message_type: 'image' });
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('NOT_FOUND');
    });
    // A lead whose open conversation is another department's: not through any channel either.
    const hidden = await inbound(api, org, salesChannel.id, nextMobile());
    await leavesNothing(org, async () => {
      const r = await sendMedia(operator.key, { channel_id: openChannel.id, remote_jid: hidden.lead.phone, message_type: 'image' });
      expect(r.status).toBe(404);
    });
    // Its own department and conversations without one are fine.
    expect((await sendMedia(operator.key, { channel_id: supportChannel.id, remote_jid: nextMobile(), message_type: 'image' })).status).toBe(
      200,
    );
    expect((await sendMedia(operator.key, { channel_id: openChannel.id, remote_jid: nextMobile(), message_type: 'image' })).status).toBe(
      200,
    );
    // Membership applies at once.
    await addMember(api, org, sales.id, operator.id);
    const now = await sendMedia(operator.key, { channel_id: openChannel.id, remote_jid: hidden.lead.phone, message_type: 'image' });
    expect(now.status).toBe(200);
    expect(now.body.data.conversation_id).toBe(hidden.conversation.id);
  });

  it('is delivered by the job to WhatsApp Cloud as a media message with the file’s link, caption and document name', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org, {
      name: 'WhatsApp',
      provider: 'whatsapp_cloud',
      config: { api_url: providerUrl, phone_number_id: '109876543210', access_token: TOKEN },
    });
    const phone = nextMobile();
    // The customer writes first: WhatsApp's 24-hour window is open.
    await inbound(api, org, channel.id, phone);
    const deliver = async (message_type: string, file: FilePart, content?: string) => {
      const r = await sendMedia(
        org.key,
        { channel_id: channel.id, remote_jid: phone, message_type, ...(content ? { content } : {}) },
        file,
      );
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const sent = await waitForMessage(api, r.body.data.id, (m) => m.status === 'sent');
      return { message: r.body.data, sent };
    };

    const image = await deliver('image', { bytes: PNG, name: 'foto.png' }, 'Olha só');
    expect(hits).toHaveLength(1);
    expect(hits[0].path).toBe('/v21.0/109876543210/messages');
    expect(hits[0].headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(hits[0].body).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: phone.slice(1),
      type: 'image',
      image: { link: image.message.media_url, caption: 'Olha só' },
    });
    expect(image.sent.provider_message_id).toBe('wamid.media.1');
    // What WhatsApp downloads from the link is the file.
    expect((await proxied(hits[0].body.image.link)).bytes).toEqual(PNG);

    const doc = await deliver('document', { bytes: PDF, name: 'C:\\Users\\ana\\proposta.pdf' });
    expect(hits[1].body).toMatchObject({ type: 'document', document: { link: doc.message.media_url, filename: 'proposta.pdf' } });
    expect(hits[1].body.document).not.toHaveProperty('caption');
    const voice = await deliver('audio', { bytes: OPUS, name: 'nota.ogg' });
    expect(hits[2].body).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: phone.slice(1),
      type: 'audio',
      audio: { link: voice.message.media_url },
    });
  });

  it('keeps media files in the start-up sweep while their message exists; a deleted lead’s become orphans it removes', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    const r = await sendMedia(org.key, { channel_id: channel.id, remote_jid: nextMobile(), message_type: 'image' });
    const file = keyOf(r.body.data.media_url);
    const storage = api.app.deps.storage;
    // A zero grace period: everything stored is old enough to be swept if unrecorded.
    await sweepOrphanFiles(api.db.prisma, storage, { graceMs: -1000 });
    expect(await store.has(file)).toBe(true);
    expect((await proxied(r.body.data.media_url)).status).toBe(200);

    expect((await api.rest('DELETE', `/backend/leads/${r.body.data.lead_id}`, { key: org.key })).status).toBe(200);
    expect((await proxied(r.body.data.media_url)).status).toBe(404);
    expect((await sweepOrphanFiles(api.db.prisma, storage, { graceMs: -1000 })).orphans).toBeGreaterThanOrEqual(1);
    expect(await store.has(file)).toBe(false);
  });
});

const SendMediaGql = graphql(`
  mutation SendMedia($channel_id: UUID!, $remote_jid: String!, $message_type: MediaType!, $content: String, $file: File!) {
    sendMediaMessage(channel_id: $channel_id, remote_jid: $remote_jid, message_type: $message_type, content: $content, file: $file) {
      id
      type
      content
      status
      media_url
      lead_id
    }
  }
`);

/** A GraphQL multipart request (operations, map, the file as part "0"). */
async function sendMediaGql(key: string, variables: Record<string, unknown>, file: FilePart) {
  const form = new FormData();
  form.append('operations', JSON.stringify({ query: print(SendMediaGql), variables: { ...variables, file: null } }));
  form.append('map', JSON.stringify({ 0: ['variables.file'] }));
  form.append(
    '0',
    new Blob([file.bytes as Uint8Array<ArrayBuffer>], { type: file.type ?? 'application/octet-stream' }),
    file.name ?? 'arquivo.bin',
  );
  const res = await api.raw('/graphql', { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  return (await res.json()) as { data?: any; errors?: any[] };
}

describe('sendMediaMessage on /graphql', () => {
  it('does what the REST route does, with the same refusals, leaving nothing behind', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    const r = await sendMediaGql(
      org.key,
      { channel_id: channel.id, remote_jid: nextMobile(), message_type: 'image', content: 'foto' },
      { bytes: PNG, name: 'foto.png' },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.sendMediaMessage).toMatchObject({
      type: 'image',
      content: 'foto',
      status: 'pending',
      media_url: expect.stringMatching(KEY_URL),
    });
    expect((await proxied(r.data.sendMediaMessage.media_url)).bytes).toEqual(PNG);
    await waitForMessage(api, r.data.sendMediaMessage.id, (m) => m.status === 'sent');

    await leavesNothing(org, async () => {
      const badPhone = await sendMediaGql(org.key, { channel_id: channel.id, remote_jid: 'abc', message_type: 'image' }, { bytes: PNG });
      expect(badPhone.errors?.[0].extensions).toMatchObject({ code: 'INVALID_PHONE', status: 400 });
      const notImage = await sendMediaGql(
        org.key,
        { channel_id: channel.id, remote_jid: nextMobile(), message_type: 'image' },
        { bytes: PDF },
      );
      expect(notImage.errors?.[0].extensions.code).toBe('INVALID_INPUT');
      const tooLarge = await sendMediaGql(
        org.key,
        { channel_id: channel.id, remote_jid: nextMobile(), message_type: 'document' },
        { bytes: patternBytes(10 * 1024 * 1024 + 1) },
      );
      expect(tooLarge.errors?.[0].extensions).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
    });
  });
});
