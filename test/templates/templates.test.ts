// Templates: the list and each of its filters, the detail, delete with its associations, tenant
// isolation, who may read and delete, and the route order under /backend/templates.
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp, type Org } from '../helpers/app.js';
import { listTemplates, makeAssociation, makeCadence, providerTemplate, syncTemplates } from './helpers.js';

const api = useTestApp();

let org: Org;
let operator: string;
const byName: Record<string, any> = {};

beforeAll(async () => {
  org = await api.newOrg();
  operator = await api.keyFor(org, 'operator');
  await syncTemplates(api, org, [
    providerTemplate('alpha', { status: 'APPROVED', category: 'MARKETING', language: 'pt_BR' }),
    providerTemplate('beta', { status: 'PENDING', category: 'UTILITY', language: 'en' }),
    providerTemplate('gamma', { status: 'REJECTED', category: 'AUTHENTICATION', language: 'pt_BR' }),
  ]);
  await syncTemplates(api, org, [providerTemplate('delta', { status: 'APPROVED', category: 'UTILITY', language: 'es' })], 'app-2');
  for (const t of await listTemplates(api, org)) byName[t.template_name] = t;
});

const names = (list: any[]) => list.map((t) => t.template_name);

describe('GET /backend/templates', () => {
  it('lists every template of the organisation by name, for operators too', async () => {
    expect(names(await listTemplates(api, org))).toEqual(['alpha', 'beta', 'delta', 'gamma']);
    const r = await api.rest('GET', '/backend/templates', { key: operator });
    expect(r.status).toBe(200);
    expect(names(r.body)).toEqual(['alpha', 'beta', 'delta', 'gamma']);
  });

  it.each([
    ['?provider_app_id=app-2', ['delta']],
    ['?provider_app_id=app-1', ['alpha', 'beta', 'gamma']],
    ['?provider_app_id=nope', []],
    ['?status=APPROVED', ['alpha', 'delta']],
    ['?status=PENDING', ['beta']],
    ['?status=REJECTED', ['gamma']],
    ['?category=MARKETING', ['alpha']],
    ['?category=UTILITY', ['beta', 'delta']],
    ['?category=AUTHENTICATION', ['gamma']],
    ['?language=pt_BR', ['alpha', 'gamma']],
    ['?language=en', ['beta']],
    ['?status=APPROVED&category=UTILITY', ['delta']],
    ['?provider_app_id=app-1&language=pt_BR&status=REJECTED', ['gamma']],
  ])('filters %s', async (query, expected) => {
    expect(names(await listTemplates(api, org, query))).toEqual(expected);
  });

  it.each(['?status=approved', '?status=PAUSED', '?category=PROMO'])('refuses an unknown filter value %s with 400', async (query) => {
    const r = await api.rest('GET', `/backend/templates${query}`, { key: org.key });
    expect(r).toMatchObject({ status: 400, body: { code: 'ERR_INVALID_INPUT' } });
  });

  it('shows nothing of another organisation', async () => {
    const other = await api.newOrg();
    expect(await listTemplates(api, other)).toEqual([]);
  });
});

describe('GET /backend/templates/{id}', () => {
  it('answers the full template with all its components, for operators too', async () => {
    const r = await api.rest('GET', `/backend/templates/${byName.alpha.id}`, { key: operator });
    expect(r.status).toBe(200);
    expect(r.body).toEqual(byName.alpha);
    expect(r.body.components).toEqual([{ type: 'BODY', text: 'Olá {{1}}, sua proposta da {{2}} está pronta.' }]);
  });

  it('answers 404 for an unknown id or another organisation’s, 400 for a malformed id', async () => {
    const other = await api.newOrg();
    expect(await api.rest('GET', `/backend/templates/${byName.alpha.id}`, { key: other.key })).toMatchObject({
      status: 404,
      body: { code: 'ERR_NOT_FOUND' },
    });
    expect(await api.rest('GET', '/backend/templates/00000000-0000-4000-8000-000000000000', { key: org.key })).toMatchObject({
      status: 404,
    });
    expect(await api.rest('GET', '/backend/templates/not-a-uuid', { key: org.key })).toMatchObject({
      status: 400,
      body: { code: 'ERR_INVALID_INPUT' },
    });
  });
});

describe('route order under /backend/templates', () => {
  it('literal segments win over /templates/{id}: cadence-associations lists, sync syncs', async () => {
    const list = await api.rest('GET', '/backend/templates/cadence-associations', { key: org.key });
    expect(list).toMatchObject({ status: 200, body: [] });
    const sync = await api.rest('POST', '/backend/templates/sync', { key: org.key, body: { app_id: 'app-3', templates: [] } });
    expect(sync).toMatchObject({ status: 200, body: { synced_count: 0, app_id: 'app-3' } });
  });
});

describe('DELETE /backend/templates/{id}', () => {
  it('deletes the template and its cadence associations (204), and nothing else', async () => {
    const own = await api.newOrg();
    const [keep, drop] = await syncTemplates(api, own, [providerTemplate('fica'), providerTemplate('sai')]);
    const cadence = await makeCadence(api, own);
    const gone = await makeAssociation(api, own, { cadence_id: cadence.id, template_id: drop.id, step_index: 0 });
    const kept = await makeAssociation(api, own, { cadence_id: cadence.id, template_id: keep.id, step_index: 1 });

    const r = await api.rest('DELETE', `/backend/templates/${drop.id}`, { key: own.key });
    expect(r.status).toBe(204);
    expect(r.body).toBeUndefined();
    expect(await api.rest('GET', `/backend/templates/${drop.id}`, { key: own.key })).toMatchObject({ status: 404 });
    const associations = await api.rest('GET', `/backend/templates/cadence-associations?cadence_id=${cadence.id}`, { key: own.key });
    expect(associations.body.map((a: any) => a.id)).toEqual([kept.id]);
    expect(associations.body.map((a: any) => a.id)).not.toContain(gone.id);
    expect(names(await listTemplates(api, own))).toEqual(['fica']);
    expect(await api.rest('DELETE', `/backend/templates/${drop.id}`, { key: own.key })).toMatchObject({
      status: 404,
      body: { code: 'ERR_NOT_FOUND' },
    });
  });

  it('answers 404 for another organisation’s template and leaves it', async () => {
    const other = await api.newOrg();
    expect(await api.rest('DELETE', `/backend/templates/${byName.beta.id}`, { key: other.key })).toMatchObject({
      status: 404,
      body: { code: 'ERR_NOT_FOUND' },
    });
    expect((await api.rest('GET', `/backend/templates/${byName.beta.id}`, { key: org.key })).status).toBe(200);
  });

  it('is for owners and admins: an operator gets 403 ERR_FORBIDDEN and the template stays', async () => {
    expect(await api.rest('DELETE', `/backend/templates/${byName.gamma.id}`, { key: operator })).toMatchObject({
      status: 403,
      body: { code: 'ERR_FORBIDDEN' },
    });
    expect((await api.rest('GET', `/backend/templates/${byName.gamma.id}`, { key: org.key })).status).toBe(200);
  });
});
