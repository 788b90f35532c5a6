// Cadences and cadence associations: create with every rule (APPROVED template, placeholders as the
// only keys, documented variables only, unknown or another organisation's ids 404), list by cadence,
// params update, delete, and who may write.
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp, type Org } from '../helpers/app.js';
import { createAssociation, makeAssociation, makeCadence, providerTemplate, syncTemplates } from './helpers.js';

const api = useTestApp();

const MISSING = '00000000-0000-4000-8000-000000000000';
let org: Org;
let operator: string;
let approved: any; // body "Olá {{1}}, sua proposta da {{2}} está pronta."
let pending: any;
let rejected: any;
let headerAndBody: any; // header {{1}}, body {{1}} {{2}} {{3}}
let noPlaceholders: any;

beforeAll(async () => {
  org = await api.newOrg();
  operator = await api.keyFor(org, 'operator');
  const list = await syncTemplates(api, org, [
    providerTemplate('aprovado'),
    providerTemplate('pendente', { status: 'PENDING' }),
    providerTemplate('rejeitado', { status: 'REJECTED' }),
    providerTemplate('completo', {
      components: [
        { type: 'HEADER', format: 'TEXT', text: 'Para {{1}}' },
        { type: 'BODY', text: '{{1}}, {{2}} e {{3}}' },
      ],
    }),
    providerTemplate('simples', { text: 'Obrigado pelo contato!' }),
  ]);
  const named = (name: string) => list.find((t) => t.template_name === name);
  [approved, pending, rejected, headerAndBody, noPlaceholders] = ['aprovado', 'pendente', 'rejeitado', 'completo', 'simples'].map(named);
});

describe('cadences', () => {
  it('POST /backend/cadences creates a cadence with its defaults (201); GET lists them oldest first, for operators too', async () => {
    const own = await api.newOrg();
    const first = await makeCadence(api, own, 'Primeira');
    expect(first).toEqual({
      id: expect.any(String),
      name: 'Primeira',
      steps: [],
      stop_on_reply: true,
      send_window: null,
      active: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    await makeCadence(api, own, 'Segunda');
    const reader = await api.keyFor(own, 'operator');
    const r = await api.rest('GET', '/backend/cadences', { key: reader });
    expect(r.status).toBe(200);
    expect(r.body.map((c: any) => c.name)).toEqual(['Primeira', 'Segunda']);
    expect((await api.rest('GET', '/backend/cadences', { key: (await api.newOrg()).key })).body).toEqual([]);
  });

  it('refuses a missing, empty or too long name (400), and operators (403)', async () => {
    for (const body of [{}, { name: '  ' }, { name: 'x'.repeat(256) }, { name: 5 }]) {
      expect(await api.rest('POST', '/backend/cadences', { key: org.key, body }), JSON.stringify(body)).toMatchObject({
        status: 400,
        body: { code: 'ERR_INVALID_INPUT' },
      });
    }
    expect(await api.rest('POST', '/backend/cadences', { key: operator, body: { name: 'Nope' } })).toMatchObject({
      status: 403,
      body: { code: 'ERR_FORBIDDEN' },
    });
  });
});

describe('POST /backend/templates/cadence-associations', () => {
  it('creates the association (201) with the embedded template {id, template_name, language, status}', async () => {
    const cadence = await makeCadence(api, org);
    const r = await createAssociation(api, org.key, {
      cadence_id: cadence.id,
      step_index: 2,
      message_index: 1,
      template_id: approved.id,
      parameter_mapping: { '1': '{{LEAD_FIRSTNAME}}', '2': 'Acme' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toEqual({
      id: expect.any(String),
      tenant_id: org.tenantId,
      cadence_id: cadence.id,
      step_index: 2,
      message_index: 1,
      template_id: approved.id,
      parameter_mapping: { '1': '{{LEAD_FIRSTNAME}}', '2': 'Acme' },
      template: { id: approved.id, template_name: 'aprovado', language: 'pt_BR', status: 'APPROVED' },
      created_at: expect.any(String),
    });
  });

  it('accepts no mapping, a partial one, every documented variable, custom fields and variables inside text', async () => {
    const cadence = await makeCadence(api, org);
    const mappings = [
      undefined,
      {},
      { '2': 'literal' },
      { '1': '{{LEAD_NAME}}', '2': '{{LEAD_NUMBER}}', '3': '{{COMPANY_NAME}}' },
      { '1': '{{LEAD_FIELD_cpf}}', '2': '{{LEAD_FIELD_Plano_2}}', '3': 'Sr(a). {{LEAD_FIRSTNAME}} da {{COMPANY_NAME}}' },
    ];
    for (const [i, parameter_mapping] of mappings.entries()) {
      const a = await makeAssociation(api, org, {
        cadence_id: cadence.id,
        template_id: headerAndBody.id,
        step_index: i,
        parameter_mapping,
      });
      expect(a.parameter_mapping).toEqual(parameter_mapping ?? {});
    }
  });

  it.each([
    ['PENDING', () => pending],
    ['REJECTED', () => rejected],
  ])('refuses a %s template with 400 ERR_INVALID_INPUT', async (_status, template) => {
    const cadence = await makeCadence(api, org);
    const r = await createAssociation(api, org.key, {
      cadence_id: cadence.id,
      step_index: 0,
      message_index: 0,
      template_id: template().id,
    });
    expect(r).toMatchObject({ status: 400, body: { code: 'ERR_INVALID_INPUT' } });
    expect((await api.rest('GET', `/backend/templates/cadence-associations?cadence_id=${cadence.id}`, { key: org.key })).body).toEqual([]);
  });

  it.each([
    ['a key that is not a placeholder of the template', { '3': 'x' }],
    ['a key that is not a number', { nome: 'x' }],
    ['a non-text value', { '1': 42 }],
    ['a null value', { '1': null }],
    ['an unknown variable', { '1': '{{LEAD_EMAIL}}' }],
    ['an unknown variable inside text', { '1': 'Olá {{NOME}}' }],
    ['a variable with spaces', { '1': '{{ LEAD_NAME }}' }],
    ['a lower-case variable', { '1': '{{lead_name}}' }],
    ['a custom field without key', { '1': '{{LEAD_FIELD_}}' }],
    ['a custom field key with other characters', { '1': '{{LEAD_FIELD_a-b}}' }],
    ['a placeholder as value', { '1': '{{2}}' }],
    ['a value over 1000 characters', { '1': 'x'.repeat(1001) }],
  ])('refuses %s with 400 ERR_INVALID_INPUT', async (_name, parameter_mapping) => {
    const cadence = await makeCadence(api, org);
    const r = await createAssociation(api, org.key, {
      cadence_id: cadence.id,
      step_index: 0,
      message_index: 0,
      template_id: approved.id,
      parameter_mapping,
    });
    expect(r, JSON.stringify(r.body)).toMatchObject({ status: 400, body: { code: 'ERR_INVALID_INPUT' } });
    expect((await api.rest('GET', `/backend/templates/cadence-associations?cadence_id=${cadence.id}`, { key: org.key })).body).toEqual([]);
  });

  it('refuses any mapping key on a template without placeholders', async () => {
    const cadence = await makeCadence(api, org);
    const body = { cadence_id: cadence.id, step_index: 0, message_index: 0, template_id: noPlaceholders.id };
    expect(await createAssociation(api, org.key, { ...body, parameter_mapping: { '1': 'x' } })).toMatchObject({ status: 400 });
    expect((await createAssociation(api, org.key, body)).status).toBe(201);
  });

  it('refuses a missing field, a negative index, a mapping that is not an object (400)', async () => {
    const cadence = await makeCadence(api, org);
    const base = { cadence_id: cadence.id, step_index: 0, message_index: 0, template_id: approved.id };
    const bodies = [
      { ...base, cadence_id: undefined },
      { ...base, template_id: undefined },
      { ...base, step_index: undefined },
      { ...base, message_index: -1 },
      { ...base, step_index: '1' },
      { ...base, cadence_id: 'not-a-uuid' },
      { ...base, parameter_mapping: ['{{LEAD_NAME}}'] },
      { ...base, parameter_mapping: '{"1":"x"}' },
    ];
    for (const body of bodies) {
      expect(await createAssociation(api, org.key, body), JSON.stringify(body)).toMatchObject({
        status: 400,
        body: { code: 'ERR_INVALID_INPUT' },
      });
    }
  });

  it('answers 404 for an unknown cadence or template, and for another organisation’s', async () => {
    const cadence = await makeCadence(api, org);
    const other = await api.newOrg();
    const [otherTemplate] = await syncTemplates(api, other, [providerTemplate('alheio')]);
    const otherCadence = await makeCadence(api, other);
    const base = { cadence_id: cadence.id, step_index: 0, message_index: 0, template_id: approved.id };
    for (const body of [
      { ...base, cadence_id: MISSING },
      { ...base, template_id: MISSING },
      { ...base, cadence_id: otherCadence.id },
      { ...base, template_id: otherTemplate.id },
    ]) {
      expect(await createAssociation(api, org.key, body), JSON.stringify(body)).toMatchObject({
        status: 404,
        body: { code: 'ERR_NOT_FOUND' },
      });
    }
    // Nor can the other organisation use this one's ids.
    expect(await createAssociation(api, other.key, { ...base, cadence_id: otherCadence.id })).toMatchObject({ status: 404 });
    expect((await api.rest('GET', `/backend/templates/cadence-associations?cadence_id=${cadence.id}`, { key: org.key })).body).toEqual([]);
    expect((await api.rest('GET', '/backend/templates/cadence-associations', { key: other.key })).body).toEqual([]);
  });

  it('allows one template per step and message: a second one there is 409 ERR_CONFLICT', async () => {
    const cadence = await makeCadence(api, org);
    await makeAssociation(api, org, { cadence_id: cadence.id, template_id: approved.id, step_index: 1, message_index: 0 });
    const again = await createAssociation(api, org.key, {
      cadence_id: cadence.id,
      template_id: headerAndBody.id,
      step_index: 1,
      message_index: 0,
    });
    expect(again).toMatchObject({ status: 409, body: { code: 'ERR_CONFLICT' } });
    expect(
      (await createAssociation(api, org.key, { cadence_id: cadence.id, template_id: approved.id, step_index: 1, message_index: 1 })).status,
    ).toBe(201);
  });

  it('is for owners and admins: an operator gets 403 ERR_FORBIDDEN', async () => {
    const cadence = await makeCadence(api, org);
    const r = await createAssociation(api, operator, { cadence_id: cadence.id, step_index: 0, message_index: 0, template_id: approved.id });
    expect(r).toMatchObject({ status: 403, body: { code: 'ERR_FORBIDDEN' } });
    const admin = await api.keyFor(org, 'admin');
    expect(
      (await createAssociation(api, admin, { cadence_id: cadence.id, step_index: 0, message_index: 0, template_id: approved.id })).status,
    ).toBe(201);
  });
});

describe('GET /backend/templates/cadence-associations', () => {
  it('lists one cadence’s associations by step and message (operators too); without cadence_id, all of them', async () => {
    const own = await api.newOrg();
    const [template] = await syncTemplates(api, own, [providerTemplate('passo')]);
    const c1 = await makeCadence(api, own, 'C1');
    const c2 = await makeCadence(api, own, 'C2');
    for (const [step, message] of [
      [1, 1],
      [0, 0],
      [1, 0],
    ])
      await makeAssociation(api, own, { cadence_id: c1.id, template_id: template.id, step_index: step, message_index: message });
    await makeAssociation(api, own, { cadence_id: c2.id, template_id: template.id });
    const reader = await api.keyFor(own, 'operator');
    const r = await api.rest('GET', `/backend/templates/cadence-associations?cadence_id=${c1.id}`, { key: reader });
    expect(r.status).toBe(200);
    expect(r.body.map((a: any) => [a.step_index, a.message_index])).toEqual([
      [0, 0],
      [1, 0],
      [1, 1],
    ]);
    expect(r.body.every((a: any) => a.cadence_id === c1.id && a.template.template_name === 'passo')).toBe(true);
    expect((await api.rest('GET', '/backend/templates/cadence-associations', { key: own.key })).body).toHaveLength(4);
    expect((await api.rest('GET', `/backend/templates/cadence-associations?cadence_id=${MISSING}`, { key: own.key })).body).toEqual([]);
    // Another organisation's cadence id lists nothing.
    expect((await api.rest('GET', `/backend/templates/cadence-associations?cadence_id=${c1.id}`, { key: org.key })).body).toEqual([]);
    expect(await api.rest('GET', '/backend/templates/cadence-associations?cadence_id=x', { key: own.key })).toMatchObject({ status: 400 });
  });
});

describe('PUT /backend/templates/cadence-associations/{id}/params', () => {
  it('replaces the mapping and answers the association', async () => {
    const cadence = await makeCadence(api, org);
    const a = await makeAssociation(api, org, {
      cadence_id: cadence.id,
      template_id: approved.id,
      parameter_mapping: { '1': 'x', '2': 'y' },
    });
    const r = await api.rest('PUT', `/backend/templates/cadence-associations/${a.id}/params`, {
      key: org.key,
      body: { parameter_mapping: { '2': '{{COMPANY_NAME}}' } },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({ ...a, parameter_mapping: { '2': '{{COMPANY_NAME}}' } });
    const listed = await api.rest('GET', `/backend/templates/cadence-associations?cadence_id=${cadence.id}`, { key: org.key });
    expect(listed.body[0].parameter_mapping).toEqual({ '2': '{{COMPANY_NAME}}' });
  });

  it('checks the mapping like create (400, unchanged); unknown or another organisation’s id 404; operators 403', async () => {
    const cadence = await makeCadence(api, org);
    const a = await makeAssociation(api, org, { cadence_id: cadence.id, template_id: approved.id, parameter_mapping: { '1': 'x' } });
    const put = (id: string, body: unknown, key = org.key) =>
      api.rest('PUT', `/backend/templates/cadence-associations/${id}/params`, { key, body });
    for (const body of [
      { parameter_mapping: { '9': 'x' } },
      { parameter_mapping: { '1': '{{DESCONHECIDA}}' } },
      { parameter_mapping: { '1': 1 } },
      {},
      { parameter_mapping: null },
    ]) {
      expect(await put(a.id, body), JSON.stringify(body)).toMatchObject({ status: 400, body: { code: 'ERR_INVALID_INPUT' } });
    }
    expect(await put(MISSING, { parameter_mapping: {} })).toMatchObject({ status: 404, body: { code: 'ERR_NOT_FOUND' } });
    const other = await api.newOrg();
    expect(await put(a.id, { parameter_mapping: {} }, other.key)).toMatchObject({ status: 404 });
    expect(await put(a.id, { parameter_mapping: {} }, operator)).toMatchObject({ status: 403, body: { code: 'ERR_FORBIDDEN' } });
    const listed = await api.rest('GET', `/backend/templates/cadence-associations?cadence_id=${cadence.id}`, { key: org.key });
    expect(listed.body[0].parameter_mapping).toEqual({ '1': 'x' });
  });
});

describe('DELETE /backend/templates/cadence-associations/{id}', () => {
  it('deletes (204, no body) and keeps the template and the cadence; 404 after, for unknown or another organisation’s; operators 403', async () => {
    const cadence = await makeCadence(api, org);
    const a = await makeAssociation(api, org, { cadence_id: cadence.id, template_id: approved.id });
    const del = (id: string, key = org.key) => api.rest('DELETE', `/backend/templates/cadence-associations/${id}`, { key });
    expect(await del(a.id, operator)).toMatchObject({ status: 403, body: { code: 'ERR_FORBIDDEN' } });
    expect(await del(a.id, (await api.newOrg()).key)).toMatchObject({ status: 404, body: { code: 'ERR_NOT_FOUND' } });
    const r = await del(a.id);
    expect(r.status).toBe(204);
    expect(r.body).toBeUndefined();
    expect(await del(a.id)).toMatchObject({ status: 404, body: { code: 'ERR_NOT_FOUND' } });
    expect((await api.rest('GET', `/backend/templates/cadence-associations?cadence_id=${cadence.id}`, { key: org.key })).body).toEqual([]);
    expect((await api.rest('GET', `/backend/templates/${approved.id}`, { key: org.key })).status).toBe(200);
  });
});
