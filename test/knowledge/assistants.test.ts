// Assistants: CRUD, limits, deletion rules, permissions and tenant isolation.
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { ERR, INVALID_FIELD, knowledgeRows, makeAssistant, makeItem } from './helpers.js';

const api = useTestApp();

const ASSISTANT = {
  id: expect.any(String),
  name: expect.any(String),
  instructions: null,
  created_at: expect.any(String),
  updated_at: expect.any(String),
};

describe('assistants', () => {
  it('creates, lists (oldest first), reads, updates partially and deletes (204)', async () => {
    const org = await api.newOrg();
    const a = await api.rest('POST', '/backend/assistants', {
      key: org.key,
      body: { name: ' Vendas ', instructions: 'Responda em português.' },
    });
    expect(a.status).toBe(201);
    expect(a.body).toEqual({ ...ASSISTANT, name: 'Vendas', instructions: 'Responda em português.' });
    const b = await makeAssistant(api, org, 'Suporte');
    expect(b).toEqual({ ...ASSISTANT, name: 'Suporte' });

    expect((await api.rest('GET', '/backend/assistants', { key: org.key })).body).toEqual([a.body, b]);
    expect((await api.rest('GET', `/backend/assistants/${a.body.id}`, { key: org.key })).body).toEqual(a.body);

    const renamed = await api.rest('PUT', `/backend/assistants/${a.body.id}`, { key: org.key, body: { name: 'Comercial' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Comercial', instructions: 'Responda em português.' });
    const cleared = await api.rest('PUT', `/backend/assistants/${a.body.id}`, { key: org.key, body: { instructions: null } });
    expect(cleared.body).toMatchObject({ name: 'Comercial', instructions: null });

    const del = await api.rest('DELETE', `/backend/assistants/${b.id}`, { key: org.key });
    expect(del.status).toBe(204);
    expect(del.body).toBeUndefined();
    expect((await api.rest('GET', `/backend/assistants/${b.id}`, { key: org.key })).status).toBe(404);
    expect((await api.rest('DELETE', `/backend/assistants/${b.id}`, { key: org.key })).status).toBe(404);
  });

  it('refuses a missing, empty or long name, long instructions and mistyped values with 400', async () => {
    const org = await api.newOrg();
    const a = await makeAssistant(api, org);
    for (const body of [
      {},
      { name: '' },
      { name: '   ' },
      { name: 'x'.repeat(256) },
      { name: 42 },
      { name: 'ok', instructions: 'x'.repeat(20_001) },
    ]) {
      const r = await api.rest('POST', '/backend/assistants', { key: org.key, body });
      expect(r.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      expect(r.body).toEqual(INVALID_FIELD);
    }
    for (const body of [{ name: '' }, { name: null }, { name: 'x'.repeat(256) }, { instructions: 'x'.repeat(20_001) }]) {
      expect((await api.rest('PUT', `/backend/assistants/${a.id}`, { key: org.key, body })).status).toBe(400);
    }
    expect(
      (await api.rest('POST', '/backend/assistants', { key: org.key, body: { name: 'x'.repeat(255), instructions: 'y'.repeat(20_000) } }))
        .status,
    ).toBe(201);
    expect((await api.rest('GET', '/backend/assistants/not-a-uuid', { key: org.key })).body).toEqual(ERR('ERR_INVALID_INPUT'));
  });

  it('will not delete an assistant that owns exclusive items (409 with item_count); its exclusions go with it', async () => {
    const org = await api.newOrg();
    const owner = await makeAssistant(api, org, 'Dono');
    const excluded = await makeAssistant(api, org, 'Excluído');
    const own = await makeItem(api, org, { assistant_id: owner.id });
    await makeItem(api, org, { assistant_id: owner.id });
    const global = await makeItem(api, org);
    await api.rest('PUT', `/backend/knowledge/${global.id}/exclusions`, { key: org.key, body: { assistant_ids: [excluded.id] } });

    const refused = await api.rest('DELETE', `/backend/assistants/${owner.id}`, { key: org.key });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ ...ERR('ERR_CONFLICT'), item_count: 2 });
    expect((await api.rest('GET', `/backend/knowledge/${own.id}`, { key: org.key })).body.assistant_id).toBe(owner.id);

    expect((await api.rest('DELETE', `/backend/assistants/${excluded.id}`, { key: org.key })).status).toBe(204);
    expect((await api.rest('GET', `/backend/knowledge/${global.id}`, { key: org.key })).body.excluded_assistant_ids).toEqual([]);
  });

  it('operators read assistants; writes need owner or admin (403), and a narrowed key only what it lists', async () => {
    const org = await api.newOrg();
    const a = await makeAssistant(api, org);
    const operator = await api.keyFor(org, 'operator');
    expect((await api.rest('GET', '/backend/assistants', { key: operator })).status).toBe(200);
    expect((await api.rest('GET', `/backend/assistants/${a.id}`, { key: operator })).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', '/backend/assistants', { name: 'x' }],
      ['PUT', `/backend/assistants/${a.id}`, { name: 'x' }],
      ['DELETE', `/backend/assistants/${a.id}`, undefined],
    ] as const) {
      const r = await api.rest(method, path, { key: operator, body });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body).toEqual(ERR('ERR_FORBIDDEN'));
    }
    const admin = await api.keyFor(org, 'admin');
    expect((await api.rest('PUT', `/backend/assistants/${a.id}`, { key: admin, body: { name: 'Admin mudou' } })).status).toBe(200);
    const narrowed = await api.keyFor(org, 'admin', ['knowledge.view']);
    expect((await api.rest('GET', '/backend/assistants', { key: narrowed })).status).toBe(200);
    expect((await api.rest('POST', '/backend/assistants', { key: narrowed, body: { name: 'x' } })).status).toBe(403);
    const unrelated = await api.keyFor(org, 'admin', ['pipeline.view']);
    expect((await api.rest('GET', '/backend/assistants', { key: unrelated })).status).toBe(403);
    expect((await api.rest('GET', '/backend/assistants', {})).status).toBe(401);
  });

  it('another organisation’s assistant is 404 everywhere and nothing of it changes', async () => {
    const a = await api.newOrg('A');
    const b = await api.newOrg('B');
    const theirs = await makeAssistant(api, b, 'Deles');
    const before = await knowledgeRows(api, b.tenantId);
    for (const [method, path, body] of [
      ['GET', `/backend/assistants/${theirs.id}`, undefined],
      ['PUT', `/backend/assistants/${theirs.id}`, { name: 'sequestrado' }],
      ['DELETE', `/backend/assistants/${theirs.id}`, undefined],
      ['GET', `/backend/assistants/${theirs.id}/knowledge`, undefined],
    ] as const) {
      const r = await api.rest(method, path, { key: a.key, body });
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body).toEqual(ERR('ERR_NOT_FOUND'));
    }
    expect((await api.rest('GET', '/backend/assistants', { key: a.key })).body).toEqual([]);
    expect(await knowledgeRows(api, b.tenantId)).toEqual(before);
  });
});
