// POST /backend/messages/send-template and sendTemplateMessage: an approved template sent to a lead,
// its body rendered and stored, and delivered to a fake WhatsApp Cloud API on loopback as the Cloud
// API's template message (by phone, or by BSUID for a lead without one).
import { describe, expect, it } from 'vitest';
import { useFakeCloudApi } from '../messaging/fake-cloud-api.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { makeChannel, makeDepartment, makeUser, waitForMessage } from '../messaging/helpers.js';
import { providerTemplate, syncTemplates } from './helpers.js';

const api = useTestApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });

const cloud = useFakeCloudApi(api, 'T');
const sent = cloud.sent;

let mobiles = 5531977700000;

async function setup() {
  const org = await api.newOrg();
  const channel = await makeChannel(api, org, {
    name: 'WhatsApp',
    provider: 'whatsapp_cloud',
    config: { api_url: cloud.url(), phone_number_id: '1065', access_token: 'token' },
  });
  const [proposta, pendente, fixo] = await syncTemplates(api, org, [
    providerTemplate('proposta'),
    providerTemplate('pendente', { status: 'PENDING' }),
    providerTemplate('fixo', { text: 'Obrigado pelo contato!' }),
  ]);
  const lead = await api.rest('POST', '/backend/leads', {
    key: org.key,
    body: { name: 'Ana', surname: 'Souza', company: 'Acme', phone: `+${mobiles++}` },
  });
  return { org, channel, proposta, pendente, fixo, lead: lead.body.data as { id: string; phone: string } };
}

const sendTemplate = (org: Org | string, body: Record<string, unknown>) =>
  api.rest('POST', '/backend/messages/send-template', { key: typeof org === 'string' ? org : org.key, body });

async function messagesOf(tenantId: string) {
  return api.db.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM messages WHERE tenant_id = $1', [tenantId]);
}

describe('POST /backend/messages/send-template', () => {
  it('stores the rendered body and delivers the Cloud API template message with the values in order', async () => {
    const { org, channel, proposta, fixo, lead } = await setup();
    const r = await sendTemplate(org, {
      lead_id: lead.id,
      template_id: proposta.id,
      parameters: { '1': '{{LEAD_FIRSTNAME}}', '2': 'empresa {{COMPANY_NAME}}' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data).toMatchObject({
      type: 'template',
      template_id: proposta.id,
      content: 'Olá Ana, sua proposta da empresa Acme está pronta.',
      status: 'pending',
      role: 'assistant',
      channel_id: channel.id,
    });
    await waitForMessage(api, r.body.data.id, (m) => m.status === 'sent');
    expect(sent).toEqual([
      {
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to: lead.phone.slice(1),
        type: 'template',
        template: {
          name: 'proposta',
          language: { code: 'pt_BR' },
          components: [
            {
              type: 'body',
              parameters: [
                { type: 'text', text: 'Ana' },
                { type: 'text', text: 'empresa Acme' },
              ],
            },
          ],
        },
      },
    ]);
    // A template without placeholders needs no parameters and sends no components.
    const plain = await sendTemplate(org, { lead_id: lead.id, template_id: fixo.id });
    await waitForMessage(api, plain.body.data.id, (m) => m.status === 'sent');
    expect(sent[1].template).toEqual({ name: 'fixo', language: { code: 'pt_BR' } });
  });

  it('refuses a template not APPROVED, a missing or empty placeholder and unknown parameters, storing nothing', async () => {
    const { org, proposta, pendente, lead } = await setup();
    const before = await messagesOf(org.tenantId);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ template_id: pendente.id, parameters: { '1': 'a', '2': 'b' } }, /APPROVED/],
      [{ template_id: proposta.id, parameters: { '1': 'a' } }, /parameters\.2/],
      [{ template_id: proposta.id }, /parameters\.1/],
      [{ template_id: proposta.id, parameters: { '1': 'a', '2': '{{LEAD_FIELD_nada}}' } }, /parameters\.2/],
      [{ template_id: proposta.id, parameters: { '1': 'a', '2': 'b', '3': 'c' } }, /"3"/],
      [{ template_id: proposta.id, parameters: { '1': 'a', '2': '{{NADA}}' } }, /NADA/],
      [{ template_id: proposta.id, parameters: { '1': 'a', '2': 7 } }, /texto/],
    ];
    for (const [body, message] of cases) {
      const r = await sendTemplate(org, { lead_id: lead.id, ...body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe('VALIDATION_ERROR');
      expect(r.body.error.message).toMatch(message);
    }
    expect(await messagesOf(org.tenantId)).toEqual(before);
    expect(sent).toEqual([]);
  });

  it('answers 404 for another organisation’s template or lead, and for a conversation the operator cannot see', async () => {
    const mine = await setup();
    const theirs = await setup();
    const params = { '1': 'a', '2': 'b' };
    for (const body of [
      { lead_id: mine.lead.id, template_id: theirs.proposta.id, parameters: params },
      { lead_id: theirs.lead.id, template_id: mine.proposta.id, parameters: params },
    ]) {
      const r = await sendTemplate(mine.org, body);
      expect(r.status, JSON.stringify(body)).toBe(404);
    }
    const hidden = await makeDepartment(api, mine.org, 'Oculto');
    const inHidden = await makeChannel(api, mine.org, { department_id: hidden.id });
    const operator = await makeUser(api, mine.org, 'operator');
    const r = await sendTemplate(operator.key, {
      lead_id: mine.lead.id,
      template_id: mine.proposta.id,
      parameters: params,
      channel_id: inHidden.id,
    });
    expect(r.status).toBe(404);
    expect(await messagesOf(mine.org.tenantId)).toEqual([{ n: 0 }]);
  });

  it('is the same on GraphQL, and sends to a lead without a phone by its BSUID', async () => {
    const { org, channel, proposta } = await setup();
    const inbound = await api.rest('POST', `/backend/channels/${channel.id}/inbound`, {
      key: org.key,
      body: { user_id: 'BR.7766554433', username: 'bia', content: 'oi' },
    });
    const lead = inbound.body.data.lead;
    const response = await api.raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
      body: JSON.stringify({
        query: `mutation($lead: UUID!, $template: UUID!, $p: JSONObject) {
          sendTemplateMessage(lead_id: $lead, template_id: $template, parameters: $p) { id type content template_id status }
        }`,
        variables: { lead: lead.id, template: proposta.id, p: { '1': '{{LEAD_NAME}}', '2': 'Funil' } },
      }),
    });
    const { data } = await response.json();
    expect(data.sendTemplateMessage).toMatchObject({
      type: 'template',
      content: 'Olá bia, sua proposta da Funil está pronta.',
      template_id: proposta.id,
    });
    await waitForMessage(api, data.sendTemplateMessage.id, (m) => m.status === 'sent');
    expect(sent[0]).toMatchObject({ recipient: 'BR.7766554433', type: 'template' });
    expect(sent[0]).not.toHaveProperty('to');
  });
});
