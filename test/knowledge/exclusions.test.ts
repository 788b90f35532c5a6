// Exclusions of global items (add, remove, replace; 409 on exclusive items; 400 and 404 for bad ids),
// what one assistant sees, and the replace serialising per item under concurrent writers.
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { ERR, INVALID_FIELD, knowledgeRows, makeAssistant, makeItem } from './helpers.js';

const api = useTestApp();
const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const sorted = (ids: string[]) => [...ids].sort();

describe('exclusions', () => {
  it('POST adds (idempotent), DELETE removes (idempotent), PUT replaces the whole list and [] clears it', async () => {
    const org = await api.newOrg();
    const [a, b, c] = [await makeAssistant(api, org, 'A'), await makeAssistant(api, org, 'B'), await makeAssistant(api, org, 'C')];
    const item = await makeItem(api, org);
    const path = `/backend/knowledge/${item.id}/exclusions`;

    const added = await api.rest('POST', `${path}/${a.id}`, { key: org.key });
    expect(added.status).toBe(200);
    expect(added.body).toEqual({ ...item, excluded_assistant_ids: [a.id], updated_at: expect.any(String) });
    const again = await api.rest('POST', `${path}/${a.id}`, { key: org.key });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(added.body);
    expect((await api.rest('POST', `${path}/${b.id}`, { key: org.key })).body.excluded_assistant_ids).toEqual(sorted([a.id, b.id]));

    const removed = await api.rest('DELETE', `${path}/${a.id}`, { key: org.key });
    expect(removed.status).toBe(200);
    expect(removed.body.excluded_assistant_ids).toEqual([b.id]);
    expect((await api.rest('DELETE', `${path}/${a.id}`, { key: org.key })).body.excluded_assistant_ids).toEqual([b.id]);

    const replaced = await api.rest('PUT', path, { key: org.key, body: { assistant_ids: [c.id, a.id, c.id] } });
    expect(replaced.status).toBe(200);
    expect(replaced.body.excluded_assistant_ids).toEqual(sorted([a.id, c.id]));
    expect((await api.rest('GET', `/backend/knowledge/${item.id}`, { key: org.key })).body.excluded_assistant_ids).toEqual(
      sorted([a.id, c.id]),
    );
    const cleared = await api.rest('PUT', path, { key: org.key, body: { assistant_ids: [] } });
    expect(cleared.body.excluded_assistant_ids).toEqual([]);
    expect((await knowledgeRows(api, org.tenantId)).exclusions).toEqual([]);
  });

  it('an exclusive item has no exclusions: POST, DELETE and PUT answer 409 and change nothing', async () => {
    const org = await api.newOrg();
    const owner = await makeAssistant(api, org, 'Dono');
    const other = await makeAssistant(api, org, 'Outro');
    const item = await makeItem(api, org, { assistant_id: owner.id });
    const before = await knowledgeRows(api, org.tenantId);
    for (const [method, path, body] of [
      ['POST', `/backend/knowledge/${item.id}/exclusions/${other.id}`, undefined],
      ['DELETE', `/backend/knowledge/${item.id}/exclusions/${other.id}`, undefined],
      ['PUT', `/backend/knowledge/${item.id}/exclusions`, { assistant_ids: [other.id] }],
      ['PUT', `/backend/knowledge/${item.id}/exclusions`, { assistant_ids: [] }],
    ] as const) {
      const r = await api.rest(method, path, { key: org.key, body });
      expect(r.status, `${method} ${path}`).toBe(409);
      expect(r.body).toEqual(ERR('ERR_CONFLICT'));
    }
    expect(await knowledgeRows(api, org.tenantId)).toEqual(before);
  });

  it('malformed ids and bodies are 400; unknown items, unknown or foreign assistants are 404; nothing changes', async () => {
    const org = await api.newOrg();
    const other = await api.newOrg('Outra');
    const a = await makeAssistant(api, org);
    const theirs = await makeAssistant(api, other);
    const item = await makeItem(api, org);
    await api.rest('POST', `/backend/knowledge/${item.id}/exclusions/${a.id}`, { key: org.key });
    const before = await knowledgeRows(api, org.tenantId);
    const path = `/backend/knowledge/${item.id}/exclusions`;

    const malformed = [
      ['POST', `${path}/abc`, undefined],
      ['DELETE', `${path}/abc`, undefined],
      ['POST', `/backend/knowledge/abc/exclusions/${a.id}`, undefined],
      ['PUT', path, {}],
      ['PUT', path, { assistant_ids: a.id }],
      ['PUT', path, { assistant_ids: ['abc'] }],
      ['PUT', path, { assistant_ids: [a.id, 'abc'] }],
      ['PUT', path, { assistant_ids: [42] }],
      ['PUT', path, { assistant_ids: null }],
      ['PUT', path, { assistant_ids: { id: a.id } }],
    ] as const;
    for (const [method, p, body] of malformed) {
      const r = await api.rest(method, p, { key: org.key, body });
      expect(r.status, `${method} ${p} ${JSON.stringify(body)}`).toBe(400);
      // Malformed path ids answer without details; bad bodies name their field.
      expect(r.body).toEqual(body === undefined ? ERR('ERR_INVALID_INPUT') : INVALID_FIELD);
    }
    const unknown = [
      ['POST', `/backend/knowledge/${UNKNOWN}/exclusions/${a.id}`, undefined],
      ['DELETE', `/backend/knowledge/${UNKNOWN}/exclusions/${a.id}`, undefined],
      ['PUT', `/backend/knowledge/${UNKNOWN}/exclusions`, { assistant_ids: [] }],
      ['POST', `${path}/${UNKNOWN}`, undefined],
      ['DELETE', `${path}/${UNKNOWN}`, undefined],
      ['PUT', path, { assistant_ids: [UNKNOWN] }],
      ['POST', `${path}/${theirs.id}`, undefined],
      ['DELETE', `${path}/${theirs.id}`, undefined],
      ['PUT', path, { assistant_ids: [a.id, theirs.id] }],
    ] as const;
    for (const [method, p, body] of unknown) {
      const r = await api.rest(method, p, { key: org.key, body });
      expect(r.status, `${method} ${p} ${JSON.stringify(body)}`).toBe(404);
      expect(r.body).toEqual(ERR('ERR_NOT_FOUND'));
    }
    expect(await knowledgeRows(api, org.tenantId)).toEqual(before);
  });

  it('concurrent replaces of one item serialise: the list is always one writer’s list, whole', async () => {
    const org = await api.newOrg();
    const assistants = [];
    for (let i = 0; i < 6; i++) assistants.push(await makeAssistant(api, org, `A${i}`));
    const ids = assistants.map((a) => a.id);
    const lists = [ids.slice(0, 3), ids.slice(3, 6), [ids[0], ids[5]], ids.slice(1, 5)];
    const item = await makeItem(api, org);
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(
        lists.map((assistant_ids) =>
          api.rest('PUT', `/backend/knowledge/${item.id}/exclusions`, { key: org.key, body: { assistant_ids } }),
        ),
      );
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      const stored = (await api.rest('GET', `/backend/knowledge/${item.id}`, { key: org.key })).body.excluded_assistant_ids;
      expect(lists.map(sorted)).toContainEqual(stored);
    }
  });

  it('an item made exclusive while exclusions are replaced ends exclusive with no exclusions, or the replace gets 409', async () => {
    const org = await api.newOrg();
    const a = await makeAssistant(api, org, 'A');
    const b = await makeAssistant(api, org, 'B');
    const item = await makeItem(api, org);
    const [replace, scope] = await Promise.all([
      api.rest('PUT', `/backend/knowledge/${item.id}/exclusions`, { key: org.key, body: { assistant_ids: [b.id] } }),
      api.rest('PUT', `/backend/knowledge/${item.id}`, { key: org.key, body: { assistant_id: a.id } }),
    ]);
    expect(scope.status).toBe(200);
    expect([200, 409]).toContain(replace.status);
    const stored = (await api.rest('GET', `/backend/knowledge/${item.id}`, { key: org.key })).body;
    expect(stored).toMatchObject({ assistant_id: a.id, excluded_assistant_ids: [] });
  });
});

describe('what an assistant sees', () => {
  it('GET /assistants/{id}/knowledge: global items minus its exclusions, plus its exclusive items, newest first', async () => {
    const org = await api.newOrg();
    const a = await makeAssistant(api, org, 'A');
    const b = await makeAssistant(api, org, 'B');
    const global = await makeItem(api, org, { name: 'Global' });
    const hiddenFromA = await makeItem(api, org, { name: 'Global sem A' });
    await api.rest('POST', `/backend/knowledge/${hiddenFromA.id}/exclusions/${a.id}`, { key: org.key });
    const onlyA = await makeItem(api, org, { name: 'Só A', assistant_id: a.id });
    const onlyB = await makeItem(api, org, { name: 'Só B', assistant_id: b.id });
    const names = async (id: string) =>
      (await api.rest('GET', `/backend/assistants/${id}/knowledge`, { key: org.key })).body.map((i: any) => i.name);

    expect(await names(a.id)).toEqual(['Só A', 'Global']);
    expect(await names(b.id)).toEqual(['Só B', 'Global sem A', 'Global']);
    const full = await api.rest('GET', `/backend/assistants/${a.id}/knowledge`, { key: org.key });
    expect(full.body[1]).toEqual((await api.rest('GET', `/backend/knowledge/${global.id}`, { key: org.key })).body);

    await api.rest('DELETE', `/backend/knowledge/${hiddenFromA.id}/exclusions/${a.id}`, { key: org.key });
    await api.rest('PUT', `/backend/knowledge/${onlyB.id}`, { key: org.key, body: { assistant_id: '' } });
    await api.rest('PUT', `/backend/knowledge/${onlyA.id}`, { key: org.key, body: { assistant_id: b.id } });
    expect(await names(a.id)).toEqual(['Só B', 'Global sem A', 'Global']);
    expect(await names(b.id)).toEqual(['Só B', 'Só A', 'Global sem A', 'Global']);

    expect((await api.rest('GET', `/backend/assistants/${UNKNOWN}/knowledge`, { key: org.key })).body).toEqual(ERR('ERR_NOT_FOUND'));
    expect((await api.rest('GET', '/backend/assistants/abc/knowledge', { key: org.key })).body).toEqual(ERR('ERR_INVALID_INPUT'));
  });
});
