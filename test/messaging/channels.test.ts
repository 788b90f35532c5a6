import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { makeChannel, makeDepartment, makeUser } from './helpers.js';

const api = useTestApp();

const TOKEN = 'EAAG-secret-access-token-123';
const whatsapp = (extra: Record<string, unknown> = {}) => ({
  name: 'WhatsApp',
  provider: 'whatsapp_cloud',
  config: { phone_number_id: '1234567890', access_token: TOKEN, app_secret: 'app-secret-xyz', verify_token: 'verify-me', ...extra },
});

describe('channels', () => {
  it('creates, reads, updates and deletes channels; config is write-only', async () => {
    const org = await api.newOrg();
    const dept = await makeDepartment(api, org, 'Vendas');
    const created = await api.rest('POST', '/backend/channels', { key: org.key, body: { ...whatsapp(), department_id: dept.id } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      success: true,
      data: {
        id: expect.any(String),
        name: 'WhatsApp',
        provider: 'whatsapp_cloud',
        department_id: dept.id,
        active: true,
        created_at: expect.any(String),
      },
    });
    const id = created.body.data.id;
    const test = await makeChannel(api, org, { name: 'Teste' });
    expect(test).toMatchObject({ provider: 'test', department_id: null, active: true });

    const list = await api.rest('GET', '/backend/channels', { key: org.key });
    expect(list.body).toEqual({ success: true, data: [created.body.data, expect.objectContaining({ id: test.id })] });
    const one = await api.rest('GET', `/backend/channels/${id}`, { key: org.key });
    expect(one.body).toEqual({ success: true, data: created.body.data });

    const put = await api.rest('PUT', `/backend/channels/${id}`, {
      key: org.key,
      body: { name: 'WA Vendas', active: false, department_id: null },
    });
    expect(put.status).toBe(204);
    expect(put.body).toBeUndefined();
    const after = (await api.rest('GET', `/backend/channels/${id}`, { key: org.key })).body.data;
    expect(after).toMatchObject({ name: 'WA Vendas', active: false, department_id: null, provider: 'whatsapp_cloud' });
    expect(
      (
        await api.rest('PUT', `/backend/channels/${id}`, {
          key: org.key,
          body: { config: { phone_number_id: '99', access_token: 'new-token' } },
        })
      ).status,
    ).toBe(204);

    // No answer carries the configuration.
    for (const r of [created, list, one, await api.rest('GET', `/backend/channels/${id}`, { key: org.key })]) {
      const text = JSON.stringify(r.body);
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain('new-token');
      expect(text).not.toContain('app-secret');
      expect(text).not.toContain('config');
    }
    const gql = await api.raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
      body: JSON.stringify({ query: '{ channels { config } }' }),
    });
    const refused = await gql.json();
    expect(refused.errors[0].message).toMatch(/config/);
    expect(JSON.stringify(refused)).not.toContain(TOKEN);

    expect((await api.rest('DELETE', `/backend/channels/${id}`, { key: org.key })).status).toBe(204);
    const gone = await api.rest('GET', `/backend/channels/${id}`, { key: org.key });
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('NOT_FOUND');
    expect((await api.rest('DELETE', `/backend/channels/${id}`, { key: org.key })).status).toBe(404);
    expect((await api.rest('PUT', `/backend/channels/${id}`, { key: org.key, body: { name: 'x' } })).status).toBe(404);
  });

  it('refuses invalid channels with VALIDATION_ERROR', async () => {
    const org = await api.newOrg();
    const bad: Record<string, unknown>[] = [
      { provider: 'test' },
      { name: 'X' },
      { name: 'X', provider: 'sms' },
      { name: 'x'.repeat(101), provider: 'test' },
      { name: 'X', provider: 'test', config: { access_token: 'a' } },
      { name: 'X', provider: 'whatsapp_cloud' },
      { name: 'X', provider: 'whatsapp_cloud', config: { phone_number_id: '1' } },
      { name: 'X', provider: 'whatsapp_cloud', config: { access_token: 'a' } },
      { name: 'X', provider: 'whatsapp_cloud', config: { phone_number_id: '1', access_token: 'a', api_url: 'ftp://x' } },
      { name: 'X', provider: 'whatsapp_cloud', config: { phone_number_id: '1', access_token: 'a', api_url: 'https://u:p@graph.example' } },
      { name: 'X', provider: 'whatsapp_cloud', config: { phone_number_id: '1', access_token: 'a', unknown: 'x' } },
      { name: 'X', provider: 'test', active: 'yes' },
      { name: 'X', provider: 'test', department_id: 'nope' },
    ];
    for (const body of bad) {
      const r = await api.rest('POST', '/backend/channels', { key: org.key, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe('VALIDATION_ERROR');
    }
    const unknownDept = await api.rest('POST', '/backend/channels', {
      key: org.key,
      body: { name: 'X', provider: 'test', department_id: '00000000-0000-4000-8000-000000000000' },
    });
    expect(unknownDept.status).toBe(404);
    expect(unknownDept.body.error.code).toBe('NOT_FOUND');
    const test = await makeChannel(api, org);
    expect((await api.rest('PUT', `/backend/channels/${test.id}`, { key: org.key, body: { config: { access_token: 'x' } } })).status).toBe(
      400,
    );
    expect((await api.rest('PUT', `/backend/channels/${test.id}`, { key: org.key, body: { active: null } })).status).toBe(400);
    expect((await api.rest('GET', '/backend/channels', { key: org.key })).body.data).toHaveLength(1);
  });

  it('holds api_url to the webhook URL rules: https, no credentials, public hosts (at creation and change)', async () => {
    const org = await api.newOrg();
    const config = (api_url: string) => ({ phone_number_id: '1', access_token: 'a', api_url });
    const channel = await api.rest('POST', '/backend/channels', {
      key: org.key,
      body: { name: 'W', provider: 'whatsapp_cloud', config: config('https://93.184.215.14/v21.0/') },
    });
    expect(channel.status).toBe(201);
    for (const url of [
      'http://graph.example.com',
      'https://127.0.0.1:9/x',
      'https://10.0.0.7',
      'https://[::1]/',
      'https://169.254.169.254/latest',
      'https://localhost/x',
      'https://u:p@93.184.215.14',
    ]) {
      const created = await api.rest('POST', '/backend/channels', {
        key: org.key,
        body: { name: 'X', provider: 'whatsapp_cloud', config: config(url) },
      });
      expect(created.status, url).toBe(400);
      expect(created.body.error.message, url).toContain('config.api_url');
      const changed = await api.rest('PUT', `/backend/channels/${channel.body.data.id}`, { key: org.key, body: { config: config(url) } });
      expect(changed.status, url).toBe(400);
    }
    const stored = await api.db.prisma.channel.findFirstOrThrow({ where: { id: channel.body.data.id } });
    expect((stored.config as { api_url: string }).api_url).toBe('https://93.184.215.14/v21.0');
    expect(await api.db.prisma.channel.count({ where: { tenant_id: org.tenantId } })).toBe(1);
  });

  it('lets every role read channels and only owner and admin manage them', async () => {
    const org = await api.newOrg();
    const operator = await makeUser(api, org, 'operator');
    const admin = await makeUser(api, org, 'admin');
    const channel = await makeChannel(api, org);
    expect((await api.rest('GET', '/backend/channels', { key: operator.key })).body.data).toHaveLength(1);
    expect((await api.rest('GET', `/backend/channels/${channel.id}`, { key: operator.key })).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', '/backend/channels', { name: 'X', provider: 'test' }],
      ['PUT', `/backend/channels/${channel.id}`, { name: 'Y' }],
      ['DELETE', `/backend/channels/${channel.id}`, undefined],
    ] as const) {
      const r = await api.rest(method, path, { key: operator.key, body });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body.error.code).toBe('FORBIDDEN');
    }
    expect((await api.rest('PUT', `/backend/channels/${channel.id}`, { key: admin.key, body: { name: 'Y' } })).status).toBe(204);
    expect((await api.rest('GET', `/backend/channels/${channel.id}`, { key: org.key })).body.data.name).toBe('Y');
  });

  it('keeps organisations apart', async () => {
    const org = await api.newOrg();
    const other = await api.newOrg();
    const theirs = await makeChannel(api, other, { name: 'Deles' });
    const theirDept = await makeDepartment(api, other, 'Deles');
    expect((await api.rest('GET', `/backend/channels/${theirs.id}`, { key: org.key })).status).toBe(404);
    expect((await api.rest('PUT', `/backend/channels/${theirs.id}`, { key: org.key, body: { name: 'Meu' } })).status).toBe(404);
    expect((await api.rest('DELETE', `/backend/channels/${theirs.id}`, { key: org.key })).status).toBe(404);
    expect(
      (await api.rest('POST', '/backend/channels', { key: org.key, body: { name: 'X', provider: 'test', department_id: theirDept.id } }))
        .status,
    ).toBe(404);
    expect((await api.rest('GET', '/backend/channels', { key: org.key })).body.data).toEqual([]);
    expect((await api.rest('GET', `/backend/channels/${theirs.id}`, { key: other.key })).body.data).toMatchObject({
      name: 'Deles',
      active: true,
    });
  });

  it('clears the department of channels when the department is deleted', async () => {
    const org = await api.newOrg();
    const dept = await makeDepartment(api, org, 'Vendas');
    const channel = await makeChannel(api, org, { department_id: dept.id });
    expect(channel.department_id).toBe(dept.id);
    expect((await api.rest('DELETE', `/backend/departments/${dept.id}`, { key: org.key })).status).toBe(204);
    expect((await api.rest('GET', `/backend/channels/${channel.id}`, { key: org.key })).body.data).toMatchObject({
      id: channel.id,
      department_id: null,
    });
  });
});
