// Preview of a cadence association for a lead: every documented variable, for leads with and without
// each field; literal values, unmapped placeholders, only the BODY; and the refusals.
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp, type Org } from '../helpers/app.js';
import { makeAssociation, makeCadence, makeLead, providerTemplate, syncTemplates } from './helpers.js';

const api = useTestApp();

const MISSING = '00000000-0000-4000-8000-000000000000';
const EVERY_VARIABLE = {
  '1': '{{LEAD_FIRSTNAME}}',
  '2': '{{LEAD_NAME}}',
  '3': '{{COMPANY_NAME}}',
  '4': '{{LEAD_NUMBER}}',
  '5': '{{LEAD_FIELD_cpf}}',
  '6': '{{LEAD_FIELD_plano}}',
};

let org: Org;
let everything: any; // association mapping EVERY_VARIABLE onto "1:{{1}}|2:{{2}}|…|6:{{6}}"

const preview = (id: string, body: unknown, key = org.key) =>
  api.rest('POST', `/backend/templates/cadence-associations/${id}/preview`, { key, body });
const textFor = async (associationId: string, leadId: string) => {
  const r = await preview(associationId, { lead_id: leadId });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(Object.keys(r.body)).toEqual(['text']);
  return r.body.text as string;
};

beforeAll(async () => {
  org = await api.newOrg();
  const [template] = await syncTemplates(api, org, [
    providerTemplate('todas', { text: '1:{{1}}|2:{{2}}|3:{{3}}|4:{{4}}|5:{{5}}|6:{{6}}' }),
  ]);
  const cadence = await makeCadence(api, org);
  everything = await makeAssociation(api, org, { cadence_id: cadence.id, template_id: template.id, parameter_mapping: EVERY_VARIABLE });
});

describe('POST /backend/templates/cadence-associations/{id}/preview', () => {
  it('fills every variable from a lead that has every field', async () => {
    const lead = await makeLead(api, org, {
      name: 'Maria Clara',
      surname: 'Souza',
      company: 'Acme Ltda',
      custom_fields: { cpf: '123.456.789-00', plano: 3 },
    });
    expect(await textFor(everything.id, lead.id)).toBe(`1:Maria|2:Maria Clara Souza|3:Acme Ltda|4:${lead.phone}|5:123.456.789-00|6:3`);
  });

  it('renders missing fields as empty: no surname, no company, no custom fields', async () => {
    const lead = await makeLead(api, org, { name: 'João' });
    expect(await textFor(everything.id, lead.id)).toBe(`1:João|2:João|3:|4:${lead.phone}|5:|6:`);
  });

  it('renders a null custom field as empty and a boolean as text; only a missing surname is left out of the name', async () => {
    const lead = await makeLead(api, org, {
      name: '  Ana  Beatriz ',
      surname: '',
      company: 'Beta',
      custom_fields: { cpf: null, plano: true },
    });
    expect(await textFor(everything.id, lead.id)).toBe(`1:Ana|2:Ana  Beatriz|3:Beta|4:${lead.phone}|5:|6:true`);
  });

  it('keeps literal text, fills variables inside it, leaves unmapped placeholders as written, and renders only the BODY', async () => {
    const [template] = await syncTemplates(
      api,
      org,
      [
        providerTemplate('misto', {
          components: [
            { type: 'HEADER', format: 'TEXT', text: 'Cabeçalho {{1}}' },
            { type: 'BODY', text: 'Olá {{1}}, {{2}}. Código {{3}}.' },
            { type: 'FOOTER', text: 'Rodapé' },
          ],
        }),
      ],
      'app-misto',
    );
    const cadence = await makeCadence(api, org);
    const a = await makeAssociation(api, org, {
      cadence_id: cadence.id,
      template_id: template.id,
      parameter_mapping: { '1': 'Sr(a). {{LEAD_FIRSTNAME}} da {{COMPANY_NAME}}', '2': 'obrigado' },
    });
    const lead = await makeLead(api, org, { name: 'Carlos Lima', company: 'Gama' });
    expect(await textFor(a.id, lead.id)).toBe('Olá Sr(a). Carlos da Gama, obrigado. Código {{3}}.');
  });

  it('never reads a lead’s data as a variable or a placeholder', async () => {
    const lead = await makeLead(api, org, { name: '{{LEAD_NUMBER}}', company: '{{2}}', custom_fields: { cpf: '{{LEAD_NAME}}' } });
    expect(await textFor(everything.id, lead.id)).toBe(`1:{{LEAD_NUMBER}}|2:{{LEAD_NUMBER}}|3:{{2}}|4:${lead.phone}|5:{{LEAD_NAME}}|6:`);
  });

  it('follows a params update', async () => {
    const lead = await makeLead(api, org, { name: 'Paula', company: 'Delta' });
    const [template] = await syncTemplates(api, org, [providerTemplate('troca', { text: 'Oi {{1}}' })], 'app-troca');
    const a = await makeAssociation(api, org, {
      cadence_id: (await makeCadence(api, org)).id,
      template_id: template.id,
      parameter_mapping: { '1': '{{LEAD_FIRSTNAME}}' },
    });
    expect(await textFor(a.id, lead.id)).toBe('Oi Paula');
    await api.rest('PUT', `/backend/templates/cadence-associations/${a.id}/params`, {
      key: org.key,
      body: { parameter_mapping: { '1': '{{COMPANY_NAME}}' } },
    });
    expect(await textFor(a.id, lead.id)).toBe('Oi Delta');
  });

  it('is open to operators', async () => {
    const lead = await makeLead(api, org, { name: 'Rita' });
    const r = await preview(everything.id, { lead_id: lead.id }, await api.keyFor(org, 'operator'));
    expect(r.status).toBe(200);
    expect(r.body.text).toContain('1:Rita|');
  });

  it('refuses a preview longer than 64 KB (400), before building it; exactly 64 KB is served', async () => {
    const lead = await makeLead(api, org, { name: 'Longo', custom_fields: { a: 'x'.repeat(2000) } });
    const mapping = { '1': '{{LEAD_FIELD_a}}'.repeat(16) }; // 32,000 characters once filled
    const [exact, over, huge] = await syncTemplates(
      api,
      org,
      [
        providerTemplate('exato', { text: `{{1}}{{1}}${'y'.repeat(65_536 - 64_000)}` }),
        providerTemplate('passa', { text: `{{1}}{{1}}${'y'.repeat(65_536 - 64_000 + 1)}` }),
        providerTemplate('enorme', { text: '{{1}}'.repeat(1000) }), // 32 MB if it were built
      ],
      'app-longo',
    );
    const cadence = await makeCadence(api, org);
    const associate = (template: any) =>
      makeAssociation(api, org, {
        cadence_id: cadence.id,
        template_id: template.id,
        parameter_mapping: mapping,
        step_index: 0,
        message_index: [exact, over, huge].indexOf(template),
      });
    expect((await textFor((await associate(exact)).id, lead.id)).length).toBe(65_536);
    for (const template of [over, huge]) {
      const r = await preview((await associate(template)).id, { lead_id: lead.id });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('ERR_INVALID_INPUT');
      expect(r.body.message).toMatch(/64 KB/);
    }
  });

  it('answers 404 for an unknown association or lead, or another organisation’s; 400 without a valid lead_id', async () => {
    const lead = await makeLead(api, org, { name: 'Zé' });
    const other = await api.newOrg();
    const otherLead = await makeLead(api, other, { name: 'Outro' });
    expect(await preview(MISSING, { lead_id: lead.id })).toMatchObject({ status: 404, body: { code: 'ERR_NOT_FOUND' } });
    expect(await preview(everything.id, { lead_id: MISSING })).toMatchObject({ status: 404, body: { code: 'ERR_NOT_FOUND' } });
    expect(await preview(everything.id, { lead_id: otherLead.id })).toMatchObject({ status: 404, body: { code: 'ERR_NOT_FOUND' } });
    expect(await preview(everything.id, { lead_id: otherLead.id }, other.key)).toMatchObject({
      status: 404,
      body: { code: 'ERR_NOT_FOUND' },
    });
    expect(await preview(everything.id, {})).toMatchObject({ status: 400, body: { code: 'ERR_INVALID_INPUT' } });
    expect(await preview(everything.id, { lead_id: 'abc' })).toMatchObject({ status: 400, body: { code: 'ERR_INVALID_INPUT' } });
  });
});
