// Customers as WhatsApp knows them in 2026: a business-scoped user id (BSUID) beside or instead of a
// phone, Brazilian mobiles with and without their ninth digit as one number. Over REST and GraphQL,
// through the inbound route, the signed Cloud webhook and delivery to a fake Cloud API on loopback.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useFakeCloudApi } from './fake-cloud-api.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { eventTypes, makeChannel, send, waitForMessage } from './helpers.js';

const api = useTestApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
const APP_SECRET = 'identities-app-secret';
const PHONE_NUMBER_ID = '106540352242922';

const cloud = useFakeCloudApi(api, 'ID');
const sent = cloud.sent;

let ids = 1502576394655000;
const nextBsuid = () => `BR.${ids++}`;
let mobiles = 88870000;
/** A Brazilian mobile in its two written forms: with the ninth digit (stored) and without. */
function nextBrazilianMobile() {
  const eight = String(mobiles++);
  return { full: `+55319${eight}`, short: `+5531${eight}` };
}

async function whatsappChannel(org: Org) {
  return makeChannel(api, org, {
    name: 'WhatsApp',
    provider: 'whatsapp_cloud',
    config: { api_url: cloud.url(), phone_number_id: PHONE_NUMBER_ID, access_token: 'token', app_secret: APP_SECRET },
  });
}

const inboundRoute = (org: Org, channelId: string, body: Record<string, unknown>) =>
  api.rest('POST', `/backend/channels/${channelId}/inbound`, { key: org.key, body: { content: 'Olá', ...body } });

async function leadsOf(tenantId: string) {
  return api.db.sql.query<{
    id: string;
    name: string;
    phone: string | null;
    whatsapp_user_id: string | null;
    whatsapp_username: string | null;
  }>('SELECT id::text AS id, name, phone, whatsapp_user_id, whatsapp_username FROM leads WHERE tenant_id = $1 ORDER BY created_at, id', [
    tenantId,
  ]);
}

async function webhook(channelId: string, value: Record<string, unknown>) {
  const body = JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '1',
        changes: [
          { field: 'messages', value: { messaging_product: 'whatsapp', metadata: { phone_number_id: PHONE_NUMBER_ID }, ...value } },
        ],
      },
    ],
  });
  const signature = `sha256=${createHmac('sha256', APP_SECRET).update(body).digest('hex')}`;
  const r = await api.raw(`/backend/channels/${channelId}/whatsapp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature },
    body,
  });
  return { status: r.status, body: await r.json() };
}

describe('lead identities', () => {
  it('stores a Brazilian mobile with its ninth digit and treats the other form as the same number', async () => {
    const org = await api.newOrg();
    const phone = nextBrazilianMobile();
    const created = await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'Ana', phone: phone.short } });
    expect(created.status).toBe(200);
    expect(created.body.data.phone).toBe(phone.full);
    const again = await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'Ana 2', phone: phone.full } });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('ALREADY_EXISTS');
    const landline = await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'Loja', phone: '+553133334444' } });
    expect(landline.body.data.phone).toBe('+553133334444');
    // Another organisation holds its own number.
    const other = await api.newOrg();
    expect((await api.rest('POST', '/backend/leads', { key: other.key, body: { name: 'Ana', phone: phone.full } })).status).toBe(200);
    // A row written before the rule, in the short form, still holds its number.
    const legacy = nextBrazilianMobile();
    await api.db.sql.query('INSERT INTO leads (tenant_id, name, phone) VALUES ($1, $2, $3)', [org.tenantId, 'Antigo', legacy.short]);
    const clash = await api.rest('PUT', `/backend/leads/${landline.body.data.id}`, { key: org.key, body: { phone: legacy.full } });
    expect(clash.status).toBe(409);
  });

  it('sets, clears and de-duplicates whatsapp_user_id on PUT, refusing what is not a BSUID', async () => {
    const org = await api.newOrg();
    const a = await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'A', phone: nextBrazilianMobile().full } });
    const b = await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'B', phone: nextBrazilianMobile().full } });
    const bsuid = nextBsuid();
    const set = await api.rest('PUT', `/backend/leads/${a.body.data.id}`, { key: org.key, body: { whatsapp_user_id: bsuid } });
    expect(set.status).toBe(200);
    expect(set.body.data).toMatchObject({ whatsapp_user_id: bsuid, whatsapp_username: null });
    const taken = await api.rest('PUT', `/backend/leads/${b.body.data.id}`, { key: org.key, body: { whatsapp_user_id: bsuid } });
    expect(taken.status).toBe(409);
    for (const bad of ['br.1', 'BR.', 'BR-123', `BR.${'1'.repeat(129)}`]) {
      const r = await api.rest('PUT', `/backend/leads/${b.body.data.id}`, { key: org.key, body: { whatsapp_user_id: bad } });
      expect(r.status, bad).toBe(400);
      expect(r.body.error.code).toBe('VALIDATION_ERROR');
    }
    const cleared = await api.rest('PUT', `/backend/leads/${a.body.data.id}`, { key: org.key, body: { whatsapp_user_id: null } });
    expect(cleared.body.data.whatsapp_user_id).toBeNull();
    // GraphQL: the same field and the same rule.
    const gql = await api.raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
      body: JSON.stringify({
        query: 'mutation($id: UUID!, $u: String) { updateLead(id: $id, whatsapp_user_id: $u) { whatsapp_user_id phone } }',
        variables: { id: b.body.data.id, u: bsuid },
      }),
    });
    expect((await gql.json()).data.updateLead.whatsapp_user_id).toBe(bsuid);
  });
});

describe('inbound messages by BSUID and phone', () => {
  it('creates a lead without a phone for a sender known by its BSUID alone, named by its username', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    const bsuid = nextBsuid();
    const r = await inboundRoute(org, channel.id, { user_id: bsuid, username: 'ana.costa' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data.lead).toMatchObject({ phone: null, whatsapp_user_id: bsuid, whatsapp_username: 'ana.costa', name: 'ana.costa' });
    expect(r.body.data.conversation.lead).toMatchObject({ id: r.body.data.lead.id, phone: null });
    const again = await inboundRoute(org, channel.id, { user_id: bsuid, content: 'de novo' });
    expect(again.body.data.lead.id).toBe(r.body.data.lead.id);
    expect(again.body.data.conversation.unread_count).toBe(2);
    expect((await leadsOf(org.tenantId)).length).toBe(1);
  });

  it('fills the phone the BSUID’s lead lacks, then finds it by either form of the phone', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    const bsuid = nextBsuid();
    const phone = nextBrazilianMobile();
    const first = await inboundRoute(org, channel.id, { user_id: bsuid });
    const both = await inboundRoute(org, channel.id, { user_id: bsuid, from: phone.short.slice(1), username: 'ana' });
    expect(both.body.data.lead).toMatchObject({ id: first.body.data.lead.id, phone: phone.full, whatsapp_username: 'ana' });
    expect(await eventTypes(api, org.tenantId)).toContain('lead.updated');
    const byShort = await inboundRoute(org, channel.id, { from: phone.short });
    const byFull = await inboundRoute(org, channel.id, { from: phone.full });
    expect(byShort.body.data.lead.id).toBe(first.body.data.lead.id);
    expect(byFull.body.data.lead.id).toBe(first.body.data.lead.id);
    expect(byFull.body.data.conversation.unread_count).toBe(4);
    const [lead] = await leadsOf(org.tenantId);
    expect(lead).toMatchObject({ phone: phone.full, whatsapp_user_id: bsuid, whatsapp_username: 'ana' });
  });

  it('finds a lead written in the short form before the rule, and gives it the BSUID', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    const phone = nextBrazilianMobile();
    await api.db.sql.query('INSERT INTO leads (tenant_id, name, phone) VALUES ($1, $2, $3)', [org.tenantId, 'Antigo', phone.short]);
    const bsuid = nextBsuid();
    const r = await inboundRoute(org, channel.id, { from: phone.full, user_id: bsuid });
    expect(r.body.data.lead).toMatchObject({ name: 'Antigo', phone: phone.short, whatsapp_user_id: bsuid });
    expect((await leadsOf(org.tenantId)).length).toBe(1);
  });

  it('keeps a message with the BSUID’s lead when the phone is another lead’s, moving nothing', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    const bsuid = nextBsuid();
    const phone = nextBrazilianMobile();
    const byId = await inboundRoute(org, channel.id, { user_id: bsuid });
    const byPhone = await inboundRoute(org, channel.id, { from: phone.full });
    const r = await inboundRoute(org, channel.id, { user_id: bsuid, from: phone.full, content: 'qual é o meu lead?' });
    expect(r.body.data.lead.id).toBe(byId.body.data.lead.id);
    expect(r.body.data.lead.phone).toBeNull();
    const leads = await leadsOf(org.tenantId);
    expect(leads.map((l) => [l.id, l.phone, l.whatsapp_user_id])).toEqual([
      [byId.body.data.lead.id, null, bsuid],
      [byPhone.body.data.lead.id, phone.full, null],
    ]);
  });

  it('refuses a sender with neither phone nor BSUID, and a malformed BSUID, storing nothing', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    for (const body of [
      {},
      { user_id: 'not-a-bsuid' },
      { from: '+5531988887777', user_id: 'BR.' },
      { user_id: nextBsuid(), username: 'x'.repeat(65) },
    ]) {
      const r = await inboundRoute(org, channel.id, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe('VALIDATION_ERROR');
    }
    expect(await leadsOf(org.tenantId)).toEqual([]);
  });

  it('keeps organisations apart: another organisation’s lead with the same BSUID is neither found nor touched', async () => {
    const one = await api.newOrg();
    const two = await api.newOrg();
    const bsuid = nextBsuid();
    const mine = await inboundRoute(one, (await makeChannel(api, one)).id, { user_id: bsuid });
    const theirs = await inboundRoute(two, (await makeChannel(api, two)).id, { user_id: bsuid, from: nextBrazilianMobile().full });
    expect(theirs.body.data.lead.id).not.toBe(mine.body.data.lead.id);
    expect((await leadsOf(one.tenantId))[0].phone).toBeNull();
  });
});

describe('the WhatsApp Cloud webhook with BSUIDs', () => {
  it('stores a message from a sender without a phone, then fills the phone a later message carries', async () => {
    const org = await api.newOrg();
    const channel = await whatsappChannel(org);
    const bsuid = nextBsuid();
    const phone = nextBrazilianMobile();
    const onlyId = await webhook(channel.id, {
      contacts: [{ profile: { name: 'Ana Costa', username: 'ana.costa' }, user_id: bsuid }],
      messages: [{ from_user_id: bsuid, id: 'wamid.BSUID1', timestamp: '1767225600', type: 'text', text: { body: 'Oi' } }],
    });
    expect(onlyId.body.data).toEqual({ messages: 1, statuses: 0 });
    expect(await leadsOf(org.tenantId)).toEqual([
      expect.objectContaining({ name: 'Ana Costa', phone: null, whatsapp_user_id: bsuid, whatsapp_username: 'ana.costa' }),
    ]);
    const withPhone = await webhook(channel.id, {
      contacts: [{ profile: { name: 'Ana Costa' }, wa_id: phone.short.slice(1), user_id: bsuid }],
      messages: [
        {
          from: phone.short.slice(1),
          from_user_id: bsuid,
          id: 'wamid.BSUID2',
          timestamp: '1767225601',
          type: 'text',
          text: { body: 'Meu número' },
        },
      ],
    });
    expect(withPhone.body.data.messages).toBe(1);
    expect(await leadsOf(org.tenantId)).toEqual([expect.objectContaining({ phone: phone.full, whatsapp_user_id: bsuid })]);
  });

  it('sends to a lead without a phone with `recipient`, and matches its statuses whatever recipient fields they carry', async () => {
    const org = await api.newOrg();
    const channel = await whatsappChannel(org);
    const bsuid = nextBsuid();
    const lead = (await inboundRoute(org, channel.id, { user_id: bsuid })).body.data.lead;
    const message = await send(api, org.key, { lead_id: lead.id, content: 'Olá, Ana' });
    const delivered = await waitForMessage(api, message.id, (m) => m.status === 'sent');
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ messaging_product: 'whatsapp', recipient: bsuid, type: 'text', text: { body: 'Olá, Ana' } });
    expect(sent[0]).not.toHaveProperty('to');
    const status = await webhook(channel.id, {
      statuses: [{ id: delivered.provider_message_id, status: 'delivered', timestamp: '1767225602', recipient_user_id: bsuid }],
    });
    expect(status.body.data).toEqual({ messages: 0, statuses: 1 });
    await waitForMessage(api, message.id, (m) => m.status === 'delivered');
    // A lead with a phone is still addressed by `to`.
    const phone = nextBrazilianMobile();
    const withPhone = (await inboundRoute(org, channel.id, { from: phone.full, user_id: nextBsuid() })).body.data.lead;
    await waitForMessage(api, (await send(api, org.key, { lead_id: withPhone.id, content: 'x' })).id, (m) => m.status === 'sent');
    expect(sent[1]).toMatchObject({ to: phone.full.slice(1) });
    expect(sent[1]).not.toHaveProperty('recipient');
  });
});
