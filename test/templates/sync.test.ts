// Templates sync: upsert by (organisation, app, name, language) keeping ids, idempotence, every invalid
// input refused with nothing written, who may sync, and a bounded number of statements for 1,000.
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { listTemplates, providerTemplate, syncRequest, syncTemplates } from './helpers.js';

const api = useTestApp();

describe('POST /backend/templates/sync', () => {
  it('creates templates with every field, and answers {synced_count, app_id}', async () => {
    const org = await api.newOrg();
    const components = [
      { type: 'HEADER', format: 'TEXT', text: 'Oferta {{1}}' },
      { type: 'BODY', text: 'Olá {{1}}, veja {{2}}.' },
      { type: 'BUTTONS', buttons: [{ type: 'QUICK_REPLY', text: 'Quero' }] },
    ];
    await syncTemplates(api, org, [
      providerTemplate('oferta', { id: '9001', category: 'UTILITY', components }),
      providerTemplate('boas_vindas'),
    ]);
    const list = await listTemplates(api, org);
    expect(list.map((t) => t.template_name)).toEqual(['boas_vindas', 'oferta']);
    const oferta = list[1];
    expect(oferta).toEqual({
      id: expect.any(String),
      tenant_id: org.tenantId,
      provider_app_id: 'app-1',
      template_name: 'oferta',
      template_id: '9001',
      language: 'pt_BR',
      status: 'APPROVED',
      category: 'UTILITY',
      components,
      last_synced_at: expect.any(String),
      updated_at: expect.any(String),
    });
  });

  it('updates an existing template in place: same id, new template_id, status, category, components and last_synced_at', async () => {
    const org = await api.newOrg();
    const [before] = await syncTemplates(api, org, [providerTemplate('aviso', { id: 'v1', status: 'PENDING' })]);
    const components = [{ type: 'BODY', text: 'Novo texto {{1}}' }];
    const [after] = await syncTemplates(api, org, [
      providerTemplate('aviso', { id: 'v2', status: 'APPROVED', category: 'AUTHENTICATION', components }),
    ]);
    expect(after.id).toBe(before.id);
    expect(after).toMatchObject({ template_id: 'v2', status: 'APPROVED', category: 'AUTHENTICATION', components });
    expect(Date.parse(after.last_synced_at)).toBeGreaterThan(Date.parse(before.last_synced_at));
  });

  it('is idempotent: the same sync twice leaves the same templates with the same ids', async () => {
    const org = await api.newOrg();
    const templates = [providerTemplate('a'), providerTemplate('b'), providerTemplate('c', { language: 'en' })];
    const first = await syncTemplates(api, org, templates);
    const second = await syncTemplates(api, org, templates);
    // A sync is a write: last_synced_at and with it updated_at move; nothing else does.
    const strip = (list: any[]) => list.map(({ last_synced_at: _, updated_at: __, ...t }) => t);
    expect(strip(second)).toEqual(strip(first));
    expect(second).toHaveLength(3);
  });

  it('keys templates by app, name and language: another language or app is another template; missing ones are kept', async () => {
    const org = await api.newOrg();
    await syncTemplates(api, org, [providerTemplate('promo', { language: 'pt_BR' }), providerTemplate('promo', { language: 'en' })]);
    await syncTemplates(api, org, [providerTemplate('promo', { language: 'pt_BR' })], 'app-2');
    const list = await listTemplates(api, org);
    expect(list.map((t) => [t.provider_app_id, t.template_name, t.language]).sort()).toEqual([
      ['app-1', 'promo', 'en'],
      ['app-1', 'promo', 'pt_BR'],
      ['app-2', 'promo', 'pt_BR'],
    ]);
    expect(new Set(list.map((t) => t.id)).size).toBe(3);
    // A later sync of app-1 without "promo/en" keeps it.
    await syncTemplates(api, org, [providerTemplate('promo', { language: 'pt_BR' })]);
    expect(await listTemplates(api, org)).toHaveLength(3);
  });

  it('keeps organisations apart: the same app, name and language in two organisations are two templates', async () => {
    const a = await api.newOrg();
    const b = await api.newOrg();
    const [inA] = await syncTemplates(api, a, [providerTemplate('igual', { id: 'from-a' })]);
    const [inB] = await syncTemplates(api, b, [providerTemplate('igual', { id: 'from-b' })]);
    expect(inB.id).not.toBe(inA.id);
    expect((await listTemplates(api, a)).map((t) => t.template_id)).toEqual(['from-a']);
  });

  it('answers synced_count 0 for an empty list', async () => {
    const org = await api.newOrg();
    const r = await syncRequest(api, org.key, []);
    expect(r).toMatchObject({ status: 200, body: { synced_count: 0, app_id: 'app-1' } });
  });

  describe('refuses invalid input with 400 ERR_INVALID_INPUT and writes nothing', () => {
    const valid = () => providerTemplate('valido');
    const cases: [string, () => unknown[]][] = [
      ['unknown status', () => [valid(), providerTemplate('x', { status: 'PAUSED' })]],
      ['lower-case status', () => [valid(), providerTemplate('x', { status: 'approved' })]],
      ['unknown category', () => [valid(), providerTemplate('x', { category: 'PROMO' })]],
      ['missing status', () => [valid(), { ...providerTemplate('x'), status: undefined }]],
      ['components not a list', () => [valid(), { ...providerTemplate('x'), components: 'BODY' }]],
      ['a component that is not an object', () => [valid(), { ...providerTemplate('x'), components: ['BODY'] }]],
      ['a component without type', () => [valid(), { ...providerTemplate('x'), components: [{ text: 'Olá' }] }]],
      ['a component whose text is not text', () => [valid(), { ...providerTemplate('x'), components: [{ type: 'BODY', text: 42 }] }]],
      ['an empty name', () => [valid(), providerTemplate('  ')]],
      ['a numeric provider id', () => [valid(), { ...providerTemplate('x'), id: 42 }]],
      ['the same name and language twice', () => [valid(), providerTemplate('dup'), providerTemplate('dup', { id: 'other' })]],
    ];
    for (const [name, templates] of cases) {
      it(name, async () => {
        const org = await api.newOrg();
        const r = await api.rest('POST', '/backend/templates/sync', { key: org.key, body: { app_id: 'app-1', templates: templates() } });
        expect(r.status, JSON.stringify(r.body)).toBe(400);
        expect(r.body).toMatchObject({ code: 'ERR_INVALID_INPUT', message: expect.any(String) });
        expect(await listTemplates(api, org)).toEqual([]);
      });
    }

    it('an update that would be invalid leaves the stored template unchanged', async () => {
      const org = await api.newOrg();
      const [before] = await syncTemplates(api, org, [providerTemplate('fixo', { id: 'v1' })]);
      const r = await syncRequest(api, org.key, [providerTemplate('fixo', { id: 'v2' }), providerTemplate('ruim', { category: 'NOPE' })]);
      expect(r.status).toBe(400);
      expect(await listTemplates(api, org)).toEqual([before]);
    });

    it('a missing or empty app_id, or templates that are not a list', async () => {
      const org = await api.newOrg();
      for (const body of [
        { templates: [valid()] },
        { app_id: ' ', templates: [valid()] },
        { app_id: 'app-1', templates: valid() },
        { app_id: 7, templates: [valid()] },
      ]) {
        const r = await api.rest('POST', '/backend/templates/sync', { key: org.key, body });
        expect(r.status, JSON.stringify(body)).toBe(400);
        expect(r.body.code).toBe('ERR_INVALID_INPUT');
      }
      expect(await listTemplates(api, org)).toEqual([]);
    });
  });

  it('is for owners and admins: an operator gets 403 ERR_FORBIDDEN and nothing is written', async () => {
    const org = await api.newOrg();
    const operator = await api.keyFor(org, 'operator');
    const r = await syncRequest(api, operator, [providerTemplate('x')]);
    expect(r).toMatchObject({ status: 403, body: { code: 'ERR_FORBIDDEN' } });
    expect(await listTemplates(api, org)).toEqual([]);
    const admin = await api.keyFor(org, 'admin');
    expect((await syncRequest(api, admin, [providerTemplate('x')])).status).toBe(200);
    // A narrowed key syncs with templates.manage, and only with it.
    expect((await syncRequest(api, await api.keyFor(org, 'admin', ['pipeline.view']), [providerTemplate('y')])).status).toBe(403);
    expect((await syncRequest(api, await api.keyFor(org, 'admin', ['templates.manage']), [providerTemplate('y')])).status).toBe(200);
  });

  it('costs the same bounded number of statements for 10 and for 1,000 templates, creating and updating', async () => {
    const org = await api.newOrg();
    const many = (n: number, prefix: string, id = 'v1') =>
      Array.from({ length: n }, (_, i) => providerTemplate(`${prefix}_${i}`, { id: `${id}-${i}` }));
    await syncRequest(api, org.key, []); // the key's last_used_at write happens once
    const sync = async (templates: ReturnType<typeof many>) => {
      const r = await syncRequest(api, org.key, templates);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.synced_count).toBe(templates.length);
    };
    const create10 = await api.countStatements(() => sync(many(10, 'small')));
    const create1000 = await api.countStatements(() => sync(many(1000, 'big')));
    const update1000 = await api.countStatements(() => sync(many(1000, 'big', 'v2')));
    expect(create1000).toBe(create10);
    expect(update1000).toBe(create10);
    expect(create10).toBeLessThanOrEqual(6);
    const list = await listTemplates(api, org, '?provider_app_id=app-1');
    expect(list).toHaveLength(1010);
    expect(list.filter((t) => t.template_id.startsWith('v2-'))).toHaveLength(1000);
  });
});
