// WhatsApp's 24-hour customer-service window: window_expires_at on conversations (REST, GraphQL, the
// live change), and on a whatsapp_cloud channel free text and media refused with 422 WINDOW_CLOSED while
// it is closed (before anything is stored or sent: 0 calls to the fake Cloud API), templates accepted;
// other providers do not enforce it.
import { describe, expect, it } from 'vitest';
import { useFakeCloudApi } from './fake-cloud-api.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { PNG } from '../uploads/helpers.js';
import { providerTemplate, syncTemplates } from '../templates/helpers.js';
import { inbound, makeChannel, nextMobile, waitForMessage } from './helpers.js';

const api = useTestApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });

const cloud = useFakeCloudApi(api, 'W');
const calls = cloud.sent;

const DAY_MS = 24 * 60 * 60 * 1000;

async function cloudChannel(org: Org) {
  return makeChannel(api, org, {
    name: 'WhatsApp',
    provider: 'whatsapp_cloud',
    config: { api_url: cloud.url(), phone_number_id: '1077', access_token: 'token' },
  });
}

const sendText = (org: Org, body: Record<string, unknown>) => api.rest('POST', '/backend/messages/send', { key: org.key, body });

function sendMedia(org: Org, fields: Record<string, string>) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('file', new Blob([PNG as Uint8Array<ArrayBuffer>], { type: 'image/png' }), 'foto.png');
  return api.rest('POST', '/backend/messages/send-media', { key: org.key, body: form });
}

const gql = async (org: Org, query: string, variables: Record<string, unknown> = {}) => {
  const r = await api.raw('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
    body: JSON.stringify({ query, variables }),
  });
  return (await r.json()) as { data?: any; errors?: any[] };
};

async function rows(tenantId: string) {
  const [row] = await api.db.sql.query<{ conversations: number; messages: number; jobs: number; events: number }>(
    `SELECT (SELECT count(*)::int FROM conversations WHERE tenant_id = $1) AS conversations,
            (SELECT count(*)::int FROM messages WHERE tenant_id = $1) AS messages,
            (SELECT count(*)::int FROM jobs WHERE queue = 'messages.deliver' AND payload->>'tenant_id' = $1::text) AS jobs,
            (SELECT count(*)::int FROM events WHERE tenant_id = $1) AS events`,
    [tenantId],
  );
  return row;
}

/** Moves the conversation's last inbound message `ms` into the past. */
async function ageWindow(conversationId: string, ms: number) {
  await api.db.sql.query(`UPDATE conversations SET last_inbound_at = now() - ($1::int * interval '1 millisecond') WHERE id = $2::uuid`, [
    ms,
    conversationId,
  ]);
}

describe('the 24-hour customer-service window', () => {
  it('is the last inbound message’s time + 24 h on the conversation, in REST, GraphQL and the list', async () => {
    const org = await api.newOrg();
    const channel = await cloudChannel(org);
    const first = await inbound(api, org, channel.id, nextMobile(), 'Oi');
    const { timestamp } = (await api.rest('GET', `/backend/leads/${first.lead.id}/messages`, { key: org.key })).body.data[0];
    const expires = new Date(new Date(timestamp).getTime() + DAY_MS).toISOString();
    expect((first.conversation as any).window_expires_at).toBe(expires);

    const one = await api.rest('GET', `/backend/conversations/${first.conversation.id}`, { key: org.key });
    expect(one.body.data.window_expires_at).toBe(expires);
    const list = await api.rest('GET', '/backend/conversations', { key: org.key });
    expect(list.body.data.map((c: any) => c.window_expires_at)).toEqual([expires]);
    const graph = await gql(
      org,
      'query($id: UUID!) { conversation(id: $id) { window_expires_at } conversations { data { window_expires_at } } }',
      {
        id: first.conversation.id,
      },
    );
    expect(graph.data).toEqual({ conversation: { window_expires_at: expires }, conversations: { data: [{ window_expires_at: expires }] } });

    // A reply does not move it; the customer's next message does.
    const reply = await sendText(org, { lead_id: first.lead.id, content: 'Olá! Como posso ajudar?' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    await waitForMessage(api, reply.body.data.id, (m) => m.status === 'sent');
    expect((await api.rest('GET', `/backend/conversations/${first.conversation.id}`, { key: org.key })).body.data.window_expires_at).toBe(
      expires,
    );
    const again = await inbound(api, org, channel.id, first.lead.phone, 'Ainda aí?');
    expect(new Date((again.conversation as any).window_expires_at).getTime()).toBeGreaterThan(new Date(expires).getTime());

    // Before any inbound message there is none.
    const lead = (await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'Bia', phone: nextMobile() } })).body.data;
    const test = await makeChannel(api, org, { name: 'Teste' });
    const sent = await sendText(org, { lead_id: lead.id, content: 'Oi', channel_id: test.id });
    expect(sent.status).toBe(200);
    const opened = await api.rest('GET', `/backend/conversations/${sent.body.data.conversation_id}`, { key: org.key });
    expect(opened.body.data.window_expires_at).toBeNull();
  });

  it('refuses free text and media with 422 WINDOW_CLOSED on a closed window, storing and sending nothing, and accepts a template', async () => {
    const org = await api.newOrg();
    const channel = await cloudChannel(org);
    const [template] = await syncTemplates(api, org, [providerTemplate('retomada', { text: 'Podemos retomar nossa conversa?' })]);

    // Never written to: no conversation yet.
    const phone = nextMobile();
    const lead = (await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'Caio', phone } })).body.data;
    const before = await rows(org.tenantId);
    const text = await sendText(org, { lead_id: lead.id, content: 'Oi' });
    expect(text.status).toBe(422);
    expect(text.body).toEqual({ success: false, error: { code: 'WINDOW_CLOSED', message: expect.stringContaining('24 horas') } });
    const media = await sendMedia(org, { channel_id: channel.id, remote_jid: phone, message_type: 'image', content: 'Foto' });
    expect(media.status).toBe(422);
    expect(media.body.error.code).toBe('WINDOW_CLOSED');
    const graph = await gql(org, 'mutation($lead: UUID!) { sendMessage(lead_id: $lead, content: "Oi") { id } }', { lead: lead.id });
    expect(graph.errors?.[0].extensions).toMatchObject({ code: 'WINDOW_CLOSED', status: 422 });
    expect(await rows(org.tenantId)).toEqual(before);
    const stored = await api.db.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM uploads WHERE tenant_id = $1', [org.tenantId]);
    expect(stored[0].n).toBe(0);

    // A template goes through whatever the window.
    const t = await api.rest('POST', '/backend/messages/send-template', {
      key: org.key,
      body: { lead_id: lead.id, template_id: template.id },
    });
    expect(t.status, JSON.stringify(t.body)).toBe(200);
    await waitForMessage(api, t.body.data.id, (m) => m.status === 'sent');
    expect(calls.map((c) => c.type)).toEqual(['template']);

    // The customer answers: the window opens; 24 h later it is closed again.
    const answer = await inbound(api, org, channel.id, phone, 'Podemos sim');
    const open = await sendText(org, { lead_id: lead.id, content: 'Ótimo!' });
    expect(open.status, JSON.stringify(open.body)).toBe(200);
    await waitForMessage(api, open.body.data.id, (m) => m.status === 'sent');
    expect(calls.map((c) => c.type)).toEqual(['template', 'text']);

    await ageWindow(answer.conversation.id, DAY_MS - 60_000);
    expect((await sendText(org, { lead_id: lead.id, content: 'Ainda dentro' })).status).toBe(200);
    await ageWindow(answer.conversation.id, DAY_MS + 1_000);
    const late = await sendText(org, { lead_id: lead.id, content: 'Tarde demais' });
    expect(late.status).toBe(422);
    expect(late.body.error.code).toBe('WINDOW_CLOSED');
    const lateMedia = await sendMedia(org, { channel_id: channel.id, remote_jid: phone, message_type: 'image' });
    expect(lateMedia.status).toBe(422);
  });

  it('is not enforced on channels of other providers', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    const phone = nextMobile();
    const lead = (await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'Davi', phone } })).body.data;
    expect((await sendText(org, { lead_id: lead.id, content: 'Oi' })).status).toBe(200);
    expect((await sendMedia(org, { channel_id: channel.id, remote_jid: phone, message_type: 'image' })).status).toBe(200);
  });
});
