// Sending: the request stores the message `pending` and queues its delivery; the job runner (started
// here with short retry delays) hands it to the channel. Errors: NOT_FOUND, INVALID_PHONE,
// CHANNEL_ERROR (nothing stored), VALIDATION_ERROR. Status callbacks only move messages forward.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageDeliveryQueue } from '../../src/domains/messaging/deliver.js';
import { runJobs, type JobRunner } from '../../src/jobs/runner.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { addMember, eventTypes, inbound, makeChannel, makeDepartment, makeUser, nextMobile, send, waitForMessage } from './helpers.js';

const api = useTestApp();
let runner: JobRunner;

const startRunner = () =>
  runJobs(api.db, { queues: [{ ...messageDeliveryQueue({ db: api.db, config: api.config }), retryDelays: [50] }], pollMs: 200 });

beforeAll(async () => {
  runner = await startRunner();
});
afterAll(async () => {
  await runner?.stop({ timeoutMs: 2_000 });
});

async function newLead(org: Org, phone = nextMobile()) {
  const r = await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'Lia', phone } });
  expect(r.status).toBe(200);
  return r.body.data as { id: string; phone: string };
}

async function counts(tenantId: string) {
  const [row] = await api.db.sql.query<{ messages: number; conversations: number; jobs: number }>(
    `SELECT (SELECT count(*)::int FROM messages WHERE tenant_id = $1) AS messages,
            (SELECT count(*)::int FROM conversations WHERE tenant_id = $1) AS conversations,
            (SELECT count(*)::int FROM jobs WHERE queue = 'messages.deliver' AND payload->>'tenant_id' = $1::text) AS jobs`,
    [tenantId],
  );
  return row;
}

describe('sending messages', () => {
  it('stores the message pending in a new conversation and delivers it through the test channel', async () => {
    const org = await api.newOrg();
    const dept = await makeDepartment(api, org, 'Vendas');
    const channel = await makeChannel(api, org, { department_id: dept.id });
    const lead = await newLead(org);
    const r = await api.rest('POST', '/backend/messages/send', { key: org.key, body: { lead_id: lead.id, content: 'Olá, Lia!' } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      success: true,
      data: {
        id: expect.any(String),
        lead_id: lead.id,
        conversation_id: expect.any(String),
        channel_id: channel.id,
        content: 'Olá, Lia!',
        type: 'text',
        role: 'assistant',
        status: 'pending',
        error: null,
        provider_message_id: null,
        media_url: null,
        template_id: null,
        timestamp: expect.any(String),
      },
    });
    const conversation = (await api.rest('GET', `/backend/conversations/${r.body.data.conversation_id}`, { key: org.key })).body.data;
    expect(conversation).toMatchObject({
      department_id: dept.id,
      channel_id: channel.id,
      unread_count: 0,
      last_message: { content: 'Olá, Lia!', role: 'assistant' },
    });

    const sent = await waitForMessage(api, r.body.data.id, (m) => m.status === 'sent');
    expect(sent.provider_message_id).toMatch(/^test-/);
    expect(await eventTypes(api, org.tenantId)).toEqual(expect.arrayContaining(['conversation.created', 'message.sent']));
    expect((await eventTypes(api, org.tenantId)).filter((t) => t === 'message.sent')).toHaveLength(1);
  });

  it('replies in the open conversation without resetting its unread count', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    const { lead, conversation } = await inbound(api, org, channel.id, nextMobile(), 'Oi');
    await inbound(api, org, channel.id, lead.phone, 'Tem alguém?');
    const message = await send(api, org.key, { lead_id: lead.id, content: 'Sim, pode falar', type: 'text' });
    expect(message.conversation_id).toBe(conversation.id);
    await waitForMessage(api, message.id, (m) => m.status === 'sent');
    const after = (await api.rest('GET', `/backend/conversations/${conversation.id}`, { key: org.key })).body.data;
    expect(after).toMatchObject({ unread_count: 2, last_message: { content: 'Sim, pode falar', role: 'assistant' } });
    const history = (await api.rest('GET', `/backend/leads/${lead.id}/messages`, { key: org.key })).body.data;
    expect(history.map((m: { content: string; role: string; status: string }) => [m.content, m.role, m.status])).toEqual([
      ['Oi', 'user', 'received'],
      ['Tem alguém?', 'user', 'received'],
      ['Sim, pode falar', 'assistant', 'sent'],
    ]);
  });

  it('chooses the channel: the one given, else the open conversation’s, else the oldest active one', async () => {
    const org = await api.newOrg();
    const inactive = await makeChannel(api, org, { name: 'Velho', active: false });
    const oldest = await makeChannel(api, org, { name: 'A' });
    const newer = await makeChannel(api, org, { name: 'B' });
    expect(inactive.active).toBe(false);

    const lead = await newLead(org);
    expect((await send(api, org.key, { lead_id: lead.id, content: 'x' })).channel_id).toBe(oldest.id);
    const viaNewer = await inbound(api, org, newer.id, nextMobile());
    expect((await send(api, org.key, { lead_id: viaNewer.lead.id, content: 'x' })).channel_id).toBe(newer.id);
    expect((await send(api, org.key, { lead_id: viaNewer.lead.id, content: 'x', channel_id: oldest.id })).channel_id).toBe(oldest.id);
  });

  it('answers CHANNEL_ERROR (502) when no channel is usable, storing nothing', async () => {
    const org = await api.newOrg();
    const other = await api.newOrg();
    const theirs = await makeChannel(api, other);
    const lead = await newLead(org);
    const none = await api.rest('POST', '/backend/messages/send', { key: org.key, body: { lead_id: lead.id, content: 'x' } });
    expect(none.status).toBe(502);
    expect(none.body).toEqual({ success: false, error: { code: 'CHANNEL_ERROR', message: expect.any(String) } });
    const inactive = await makeChannel(api, org, { active: false });
    expect((await api.rest('POST', '/backend/messages/send', { key: org.key, body: { lead_id: lead.id, content: 'x' } })).status).toBe(502);
    expect(
      (
        await api.rest('POST', '/backend/messages/send', {
          key: org.key,
          body: { lead_id: lead.id, content: 'x', channel_id: inactive.id },
        })
      ).status,
    ).toBe(502);
    const foreign = await api.rest('POST', '/backend/messages/send', {
      key: org.key,
      body: { lead_id: lead.id, content: 'x', channel_id: theirs.id },
    });
    expect(foreign.status).toBe(502);
    expect(foreign.body.error.code).toBe('CHANNEL_ERROR');
    // The open conversation's channel was deactivated: no fallback to another one.
    const active = await makeChannel(api, org);
    const talk = await inbound(api, org, active.id, nextMobile());
    await api.rest('PUT', `/backend/channels/${active.id}`, { key: org.key, body: { active: false } });
    const before = await counts(org.tenantId);
    expect((await api.rest('POST', '/backend/messages/send', { key: org.key, body: { lead_id: talk.lead.id, content: 'x' } })).status).toBe(
      502,
    );
    expect(await counts(org.tenantId)).toEqual(before);
    expect(before).toEqual({ messages: 1, conversations: 1, jobs: 0 });
    expect(await eventTypes(api, org.tenantId)).not.toContain('message.sent');
  });

  it('answers NOT_FOUND, INVALID_PHONE and VALIDATION_ERROR, storing nothing', async () => {
    const org = await api.newOrg();
    await makeChannel(api, org);
    const lead = await newLead(org);
    const unknown = await api.rest('POST', '/backend/messages/send', {
      key: org.key,
      body: { lead_id: '00000000-0000-4000-8000-000000000000', content: 'x' },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');
    const other = await api.newOrg();
    const theirLead = await newLead(other);
    expect((await api.rest('POST', '/backend/messages/send', { key: org.key, body: { lead_id: theirLead.id, content: 'x' } })).status).toBe(
      404,
    );

    // E.164-shaped, but no such number can exist in Brazil.
    const badPhone = await newLead(org, '+5511800000000');
    const invalid = await api.rest('POST', '/backend/messages/send', { key: org.key, body: { lead_id: badPhone.id, content: 'x' } });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toEqual({ success: false, error: { code: 'INVALID_PHONE', message: expect.any(String) } });

    for (const body of [
      { lead_id: lead.id },
      { lead_id: lead.id, content: '' },
      { lead_id: lead.id, content: '  ' },
      { lead_id: lead.id, content: 'x'.repeat(4097) },
      { lead_id: lead.id, content: 'x', type: 'image' },
      { lead_id: lead.id, content: 42 },
      { lead_id: 'nope', content: 'x' },
      { content: 'x' },
      { lead_id: lead.id, content: 'x', channel_id: 'nope' },
    ]) {
      const r = await api.rest('POST', '/backend/messages/send', { key: org.key, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe('VALIDATION_ERROR');
    }
    expect(await counts(org.tenantId)).toEqual({ messages: 0, conversations: 0, jobs: 0 });
  });

  it('moves statuses forward only on status callbacks, by our id or the provider’s', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    const lead = await newLead(org);
    const message = await send(api, org.key, { lead_id: lead.id, content: 'x' });
    const sent = await waitForMessage(api, message.id, (m) => m.status === 'sent');
    const report = (body: Record<string, unknown>, key = org.key, channelId = channel.id) =>
      api.rest('POST', `/backend/channels/${channelId}/status`, { key, body });

    const delivered = await report({ message_id: sent.provider_message_id, status: 'delivered' });
    expect(delivered.status).toBe(200);
    expect(delivered.body.data).toMatchObject({ id: message.id, status: 'delivered' });
    expect((await report({ message_id: message.id, status: 'read' })).body.data.status).toBe('read');
    // Backwards: no change.
    expect((await report({ message_id: message.id, status: 'delivered' })).body.data.status).toBe('read');
    expect((await report({ message_id: message.id, status: 'failed', error: 'late' })).body.data).toMatchObject({
      status: 'read',
      error: null,
    });

    const second = await send(api, org.key, { lead_id: lead.id, content: 'y' });
    await waitForMessage(api, second.id, (m) => m.status === 'sent');
    expect((await report({ message_id: second.id, status: 'failed', error: 'Número bloqueado' })).body.data).toMatchObject({
      status: 'failed',
      error: 'Número bloqueado',
    });
    expect((await report({ message_id: second.id, status: 'read' })).body.data.status).toBe('failed');

    for (const body of [
      { message_id: message.id, status: 'received' },
      { message_id: message.id, status: 'pending' },
      { message_id: '', status: 'read' },
      { status: 'read' },
    ]) {
      const r = await report(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe('VALIDATION_ERROR');
    }
    const missing = await report({ message_id: 'wamid.unknown', status: 'read' });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('NOT_FOUND');
    // The message of another channel, inbound messages and other organisations' channels are not found.
    const otherChannel = await makeChannel(api, org);
    expect((await report({ message_id: message.id, status: 'read' }, org.key, otherChannel.id)).status).toBe(404);
    const incoming = await inbound(api, org, channel.id, nextMobile());
    expect((await report({ message_id: incoming.message.id, status: 'read' })).status).toBe(404);
    const stranger = await api.newOrg();
    expect((await report({ message_id: message.id, status: 'read' }, stranger.key)).status).toBe(404);
    expect((await eventTypes(api, org.tenantId)).filter((t) => t === 'message.sent')).toHaveLength(2);
  });

  it('takes status callbacks with an operator’s key for the messages the operator sees only', async () => {
    const org = await api.newOrg();
    const dept = await makeDepartment(api, org, 'Vendas');
    const hiddenChannel = await makeChannel(api, org, { department_id: dept.id });
    const openChannel = await makeChannel(api, org);
    const operator = await makeUser(api, org, 'operator');
    const report = (channelId: string, messageId: string) =>
      api.rest('POST', `/backend/channels/${channelId}/status`, {
        key: operator.key,
        body: { message_id: messageId, status: 'delivered' },
      });

    const seen = await send(api, org.key, { lead_id: (await newLead(org)).id, content: 'visível', channel_id: openChannel.id });
    await waitForMessage(api, seen.id, (m) => m.status === 'sent');
    const ok = await report(openChannel.id, seen.id);
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ id: seen.id, status: 'delivered' });

    const hidden = await send(api, org.key, { lead_id: (await newLead(org)).id, content: 'oculta', channel_id: hiddenChannel.id });
    await waitForMessage(api, hidden.id, (m) => m.status === 'sent');
    const refused = await report(hiddenChannel.id, hidden.id);
    expect(refused.status).toBe(404);
    expect(refused.body.error.code).toBe('NOT_FOUND');
    expect((await waitForMessage(api, hidden.id, () => true)).status).toBe('sent');
    // Membership opens it at once.
    await addMember(api, org, dept.id, operator.id);
    expect((await report(hiddenChannel.id, hidden.id)).status).toBe(200);
  });

  it('emits message.sent once when a status callback overtakes the delivery job', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    const lead = await newLead(org);
    // The workers are stopped while the provider's callback comes in first.
    await runner.stop({ timeoutMs: 2_000 });
    const message = await send(api, org.key, { lead_id: lead.id, content: 'x' });
    const r = await api.rest('POST', `/backend/channels/${channel.id}/status`, {
      key: org.key,
      body: { message_id: message.id, status: 'delivered' },
    });
    expect(r.body.data.status).toBe('delivered');
    expect((await counts(org.tenantId)).jobs).toBe(1);
    runner = await startRunner();
    for (let i = 0; i < 100 && (await counts(org.tenantId)).jobs > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect((await counts(org.tenantId)).jobs).toBe(0);
    expect((await waitForMessage(api, message.id, () => true)).status).toBe('delivered');
    expect((await eventTypes(api, org.tenantId)).filter((t) => t === 'message.sent')).toHaveLength(1);
  });
});
