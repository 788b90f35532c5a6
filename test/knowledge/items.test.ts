// Knowledge items over JSON and multipart: create, partial update, read, list, delete; the limits on
// create and update; assistant_id and the scope transitions; permissions and tenant isolation.
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { ERR, INVALID_FIELD, form, knowledgeRows, makeAssistant, makeItem } from './helpers.js';

const api = useTestApp();

const ITEM = {
  id: expect.any(String),
  tenant_id: expect.any(String),
  name: expect.any(String),
  description: '',
  content: '',
  source_url: null,
  usage_instruction: null,
  assistant_id: null,
  excluded_assistant_ids: [],
  file_name: null,
  file_type: null,
  file_size: null,
  created_at: expect.any(String),
  updated_at: expect.any(String),
};

const NOT_UUID = 'abc';

describe('knowledge items over JSON', () => {
  it('creates (201), reads, lists newest first, updates partially and deletes (204)', async () => {
    const org = await api.newOrg();
    const created = await api.rest('POST', '/backend/knowledge', {
      key: org.key,
      body: {
        name: ' Política de trocas ',
        description: 'Regras de troca',
        content: 'Trocas em até 30 dias.',
        usage_instruction: 'Use quando o cliente pedir troca.',
        source_url: 'https://example.com/trocas',
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      ...ITEM,
      tenant_id: org.tenantId,
      name: 'Política de trocas',
      description: 'Regras de troca',
      content: 'Trocas em até 30 dias.',
      usage_instruction: 'Use quando o cliente pedir troca.',
      source_url: 'https://example.com/trocas',
    });
    const minimal = await api.rest('POST', '/backend/knowledge', { key: org.key, body: { name: 'Só o nome' } });
    expect(minimal.body).toEqual({ ...ITEM, name: 'Só o nome' });

    expect((await api.rest('GET', `/backend/knowledge/${created.body.id}`, { key: org.key })).body).toEqual(created.body);
    expect((await api.rest('GET', '/backend/knowledge', { key: org.key })).body).toEqual([minimal.body, created.body]);

    const updated = await api.rest('PUT', `/backend/knowledge/${created.body.id}`, {
      key: org.key,
      body: { content: 'Trocas em até 60 dias.' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ ...created.body, content: 'Trocas em até 60 dias.', updated_at: expect.any(String) });
    expect(Date.parse(updated.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.body.updated_at));
    const nulls = await api.rest('PUT', `/backend/knowledge/${created.body.id}`, {
      key: org.key,
      body: { description: null, usage_instruction: null, source_url: '', name: 'Trocas' },
    });
    expect(nulls.body).toMatchObject({
      name: 'Trocas',
      description: '',
      usage_instruction: null,
      source_url: null,
      content: 'Trocas em até 60 dias.',
    });
    const empty = await api.rest('PUT', `/backend/knowledge/${created.body.id}`, { key: org.key, body: {} });
    expect(empty.body).toEqual(nulls.body);

    const del = await api.rest('DELETE', `/backend/knowledge/${created.body.id}`, { key: org.key });
    expect(del.status).toBe(204);
    expect(del.body).toBeUndefined();
    for (const [method, path] of [
      ['GET', `/backend/knowledge/${created.body.id}`],
      ['PUT', `/backend/knowledge/${created.body.id}`],
      ['DELETE', `/backend/knowledge/${created.body.id}`],
    ] as const) {
      const r = await api.rest(method, path, { key: org.key, body: method === 'PUT' ? { name: 'x' } : undefined });
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body).toEqual(ERR('ERR_NOT_FOUND'));
    }
    expect((await api.rest('GET', `/backend/knowledge/${NOT_UUID}`, { key: org.key })).body).toEqual(ERR('ERR_INVALID_INPUT'));
  });

  it('enforces name 1–255, description ≤ 1000, usage_instruction ≤ 2000 on create and update (400), and accepts the limits', async () => {
    const org = await api.newOrg();
    const item = await makeItem(api, org);
    const bad: Record<string, unknown>[] = [
      { name: '' },
      { name: '  ' },
      { name: 'x'.repeat(256) },
      { name: 'ok', description: 'x'.repeat(1001) },
      { name: 'ok', usage_instruction: 'x'.repeat(2001) },
      { name: 'ok', source_url: 'ftp://example.com/x' },
      { name: 'ok', source_url: 'não é url' },
      { name: 42 },
      { name: 'ok', content: ['lista'] },
      { name: 'ok', description: 7 },
      { name: 'ok', assistant_id: 5 },
    ];
    for (const body of [{}, { content: 'sem nome' }, ...bad]) {
      const r = await api.rest('POST', '/backend/knowledge', { key: org.key, body });
      expect(r.status, `create ${JSON.stringify(body).slice(0, 60)}`).toBe(400);
      expect(r.body).toEqual(INVALID_FIELD);
    }
    for (const body of [{ name: null }, ...bad]) {
      const r = await api.rest('PUT', `/backend/knowledge/${item.id}`, { key: org.key, body });
      expect(r.status, `update ${JSON.stringify(body).slice(0, 60)}`).toBe(400);
      expect(r.body).toEqual(INVALID_FIELD);
    }
    expect((await api.rest('GET', `/backend/knowledge/${item.id}`, { key: org.key })).body).toEqual(item);

    const limits = { name: 'n'.repeat(255), description: 'd'.repeat(1000), usage_instruction: 'u'.repeat(2000) };
    const atLimits = await api.rest('POST', '/backend/knowledge', { key: org.key, body: limits });
    expect(atLimits.status).toBe(201);
    expect(atLimits.body).toMatchObject(limits);
    expect((await api.rest('PUT', `/backend/knowledge/${item.id}`, { key: org.key, body: limits })).body).toMatchObject(limits);
  });

  it('assistant_id: an assistant of the organisation (exclusive), another organisation’s or unknown (404), malformed (400)', async () => {
    const org = await api.newOrg();
    const other = await api.newOrg('Outra');
    const mine = await makeAssistant(api, org);
    const theirs = await makeAssistant(api, other);
    const exclusive = await api.rest('POST', '/backend/knowledge', { key: org.key, body: { name: 'Exclusivo', assistant_id: mine.id } });
    expect(exclusive.body).toMatchObject({ assistant_id: mine.id, excluded_assistant_ids: [] });
    expect(
      (await api.rest('POST', '/backend/knowledge', { key: org.key, body: { name: 'Global', assistant_id: '' } })).body.assistant_id,
    ).toBeNull();

    const item = await makeItem(api, org);
    for (const assistant_id of [theirs.id, '00000000-0000-4000-8000-000000000000']) {
      expect((await api.rest('POST', '/backend/knowledge', { key: org.key, body: { name: 'x', assistant_id } })).body).toEqual(
        ERR('ERR_NOT_FOUND'),
      );
      const r = await api.rest('PUT', `/backend/knowledge/${item.id}`, { key: org.key, body: { assistant_id } });
      expect(r.status).toBe(404);
      expect(r.body).toEqual(ERR('ERR_NOT_FOUND'));
    }
    for (const assistant_id of [NOT_UUID, ' ']) {
      expect((await api.rest('POST', '/backend/knowledge', { key: org.key, body: { name: 'x', assistant_id } })).body).toEqual(
        INVALID_FIELD,
      );
      expect((await api.rest('PUT', `/backend/knowledge/${item.id}`, { key: org.key, body: { assistant_id } })).body).toEqual(
        INVALID_FIELD,
      );
    }
    expect((await api.rest('GET', `/backend/knowledge/${item.id}`, { key: org.key })).body).toEqual(item);
    expect((await knowledgeRows(api, org.tenantId)).items).toHaveLength(3);
  });

  it('scope transitions: absent keeps it, "" makes the item global, an id makes it exclusive and drops its exclusions', async () => {
    const org = await api.newOrg();
    const a = await makeAssistant(api, org, 'A');
    const b = await makeAssistant(api, org, 'B');
    const item = await makeItem(api, org);
    const put = (body: object) => api.rest('PUT', `/backend/knowledge/${item.id}`, { key: org.key, body });

    await api.rest('POST', `/backend/knowledge/${item.id}/exclusions/${b.id}`, { key: org.key });
    expect((await put({ name: 'Ainda global' })).body).toMatchObject({ assistant_id: null, excluded_assistant_ids: [b.id] });
    expect((await put({ assistant_id: a.id })).body).toMatchObject({ assistant_id: a.id, excluded_assistant_ids: [] });
    expect((await knowledgeRows(api, org.tenantId)).exclusions).toEqual([]);
    expect((await put({ description: 'sem assistant_id' })).body).toMatchObject({ assistant_id: a.id });
    expect((await put({ assistant_id: b.id })).body).toMatchObject({ assistant_id: b.id });
    expect((await put({ assistant_id: '' })).body).toMatchObject({ assistant_id: null, excluded_assistant_ids: [] });
    expect((await put({ assistant_id: a.id })).body.assistant_id).toBe(a.id);
    // JSON null clears, as everywhere in the API: the item becomes global.
    expect((await put({ assistant_id: null })).body.assistant_id).toBeNull();
  });

  it('lists items with their exclusions in a fixed number of statements, however many items', async () => {
    const org = await api.newOrg();
    const a = await makeAssistant(api, org);
    for (let i = 0; i < 6; i++) {
      const item = await makeItem(api, org, { name: `Item ${i}` });
      await api.rest('POST', `/backend/knowledge/${item.id}/exclusions/${a.id}`, { key: org.key });
    }
    const statements = await api.countStatements(() => api.rest('GET', '/backend/knowledge', { key: org.key }));
    const list = await api.rest('GET', '/backend/knowledge', { key: org.key });
    expect(list.body).toHaveLength(6);
    expect(list.body.every((i: any) => i.excluded_assistant_ids[0] === a.id)).toBe(true);
    // Key lookup, the items, their exclusions.
    expect(statements).toBeLessThanOrEqual(3);
  });
});

describe('knowledge items over multipart', () => {
  it('creates and updates with form fields typed strictly', async () => {
    const org = await api.newOrg();
    const created = await api.rest('POST', '/backend/knowledge', {
      key: org.key,
      body: form({
        name: 'Horários',
        description: 'Quando abrimos',
        content: 'Seg a sex, 9h às 18h.',
        usage_instruction: 'Perguntas de horário',
      }),
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      ...ITEM,
      name: 'Horários',
      description: 'Quando abrimos',
      content: 'Seg a sex, 9h às 18h.',
      usage_instruction: 'Perguntas de horário',
    });
    const updated = await api.rest('PUT', `/backend/knowledge/${created.body.id}`, {
      key: org.key,
      body: form({ content: 'Seg a sáb, 9h às 18h.' }),
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: 'Horários', description: 'Quando abrimos', content: 'Seg a sáb, 9h às 18h.' });
  });

  it('enforces the same limits on create and update (400)', async () => {
    const org = await api.newOrg();
    const item = await makeItem(api, org);
    const bad: Record<string, string>[] = [
      { name: '' },
      { name: 'x'.repeat(256) },
      { name: 'ok', description: 'x'.repeat(1001) },
      { name: 'ok', usage_instruction: 'x'.repeat(2001) },
    ];
    for (const fields of [{ content: 'sem nome' }, ...bad]) {
      const r = await api.rest('POST', '/backend/knowledge', { key: org.key, body: form(fields) });
      expect(r.status, `create ${JSON.stringify(fields).slice(0, 60)}`).toBe(400);
      expect(r.body).toEqual(INVALID_FIELD);
    }
    for (const fields of bad) {
      const r = await api.rest('PUT', `/backend/knowledge/${item.id}`, { key: org.key, body: form(fields) });
      expect(r.status, `update ${JSON.stringify(fields).slice(0, 60)}`).toBe(400);
    }
    expect((await api.rest('GET', `/backend/knowledge/${item.id}`, { key: org.key })).body).toEqual(item);
  });

  it('scope transitions: field absent keeps the scope, "" makes the item global, an id makes it exclusive; foreign id 404, malformed 400', async () => {
    const org = await api.newOrg();
    const other = await api.newOrg('Outra');
    const a = await makeAssistant(api, org, 'A');
    const b = await makeAssistant(api, org, 'B');
    const theirs = await makeAssistant(api, other);
    const created = await api.rest('POST', '/backend/knowledge', {
      key: org.key,
      body: form({ name: 'Via formulário', assistant_id: a.id }),
    });
    expect(created.body.assistant_id).toBe(a.id);
    const id = created.body.id;
    const put = (fields: Record<string, string>) => api.rest('PUT', `/backend/knowledge/${id}`, { key: org.key, body: form(fields) });

    expect((await put({ name: 'Sem assistant_id' })).body).toMatchObject({ name: 'Sem assistant_id', assistant_id: a.id });
    expect((await put({ assistant_id: '' })).body).toMatchObject({ assistant_id: null });
    await api.rest('PUT', `/backend/knowledge/${id}/exclusions`, { key: org.key, body: { assistant_ids: [a.id] } });
    expect((await put({ description: 'ainda global' })).body).toMatchObject({ assistant_id: null, excluded_assistant_ids: [a.id] });
    expect((await put({ assistant_id: b.id })).body).toMatchObject({ assistant_id: b.id, excluded_assistant_ids: [] });

    expect((await put({ assistant_id: theirs.id })).body).toEqual(ERR('ERR_NOT_FOUND'));
    expect((await put({ assistant_id: NOT_UUID })).body).toEqual(INVALID_FIELD);
    expect(
      (await api.rest('POST', '/backend/knowledge', { key: org.key, body: form({ name: 'x', assistant_id: theirs.id }) })).status,
    ).toBe(404);
    expect((await api.rest('GET', `/backend/knowledge/${id}`, { key: org.key })).body.assistant_id).toBe(b.id);
  });
});

describe('knowledge permissions and isolation', () => {
  it('operators read; writes need owner or admin (403); a narrowed key only what it lists', async () => {
    const org = await api.newOrg();
    const item = await makeItem(api, org);
    const a = await makeAssistant(api, org);
    const operator = await api.keyFor(org, 'operator');
    for (const path of [
      '/backend/knowledge',
      `/backend/knowledge/${item.id}`,
      `/backend/assistants/${a.id}/knowledge`,
      '/backend/knowledge/search?q=texto',
    ]) {
      expect((await api.rest('GET', path, { key: operator })).status, path).toBe(200);
    }
    const writes = [
      ['POST', '/backend/knowledge', { name: 'x' }],
      ['PUT', `/backend/knowledge/${item.id}`, { name: 'x' }],
      ['DELETE', `/backend/knowledge/${item.id}`, undefined],
      ['POST', `/backend/knowledge/${item.id}/exclusions/${a.id}`, undefined],
      ['DELETE', `/backend/knowledge/${item.id}/exclusions/${a.id}`, undefined],
      ['PUT', `/backend/knowledge/${item.id}/exclusions`, { assistant_ids: [] }],
    ] as const;
    for (const [method, path, body] of writes) {
      const r = await api.rest(method, path, { key: operator, body });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body).toEqual(ERR('ERR_FORBIDDEN'));
    }
    const multipart = await api.rest('POST', '/backend/knowledge', { key: operator, body: form({ name: 'x' }) });
    expect(multipart.status).toBe(403);
    const reader = await api.keyFor(org, 'owner', ['knowledge.view']);
    expect((await api.rest('GET', '/backend/knowledge', { key: reader })).status).toBe(200);
    expect((await api.rest('POST', '/backend/knowledge', { key: reader, body: { name: 'x' } })).status).toBe(403);
    const writer = await api.keyFor(org, 'admin', ['knowledge.manage']);
    expect((await api.rest('POST', '/backend/knowledge', { key: writer, body: { name: 'x' } })).status).toBe(201);
    expect((await api.rest('GET', '/backend/knowledge', { key: writer })).status).toBe(403);
    expect((await api.rest('GET', `/backend/knowledge/${item.id}`, { key: org.key })).body).toEqual(item);
  });

  it('another organisation’s items are 404 on every route, invisible in lists and search, and unchanged', async () => {
    const a = await api.newOrg('A');
    const b = await api.newOrg('B');
    const mine = await makeAssistant(api, a);
    const theirs = await makeAssistant(api, b);
    const item = await makeItem(api, b, { name: 'Segredo de B', content: 'confidencial' });
    const before = await knowledgeRows(api, b.tenantId);
    const attempts = [
      ['GET', `/backend/knowledge/${item.id}`, undefined],
      ['PUT', `/backend/knowledge/${item.id}`, { name: 'sequestrado' }],
      ['DELETE', `/backend/knowledge/${item.id}`, undefined],
      ['POST', `/backend/knowledge/${item.id}/exclusions/${mine.id}`, undefined],
      ['DELETE', `/backend/knowledge/${item.id}/exclusions/${mine.id}`, undefined],
      ['PUT', `/backend/knowledge/${item.id}/exclusions`, { assistant_ids: [mine.id] }],
      ['GET', `/backend/knowledge/search?q=confidencial&assistant_id=${theirs.id}`, undefined],
    ] as const;
    for (const [method, path, body] of attempts) {
      const r = await api.rest(method, path, { key: a.key, body });
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body).toEqual(ERR('ERR_NOT_FOUND'));
    }
    const multipart = await api.rest('PUT', `/backend/knowledge/${item.id}`, { key: a.key, body: form({ name: 'sequestrado' }) });
    expect(multipart.status).toBe(404);
    expect((await api.rest('GET', '/backend/knowledge', { key: a.key })).body).toEqual([]);
    expect((await api.rest('GET', '/backend/knowledge/search?q=confidencial', { key: a.key })).body).toEqual([]);
    expect(await knowledgeRows(api, b.tenantId)).toEqual(before);
  });
});
