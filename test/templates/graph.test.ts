// The same operations on /graphql, and the graph REST leaves out: Cadence.associations,
// Template.associations and CadenceAssociation.cadence, loaded without one query per row.
import { beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../gql/index.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { makeLead, providerTemplate } from './helpers.js';

const api = useTestApp();

const SyncGql = graphql(`
  mutation TemplatesSync($app_id: String!, $templates: [TemplateSyncItem!]!) {
    syncTemplates(app_id: $app_id, templates: $templates) {
      synced_count
      app_id
    }
  }
`);

const TemplatesGql = graphql(`
  query TemplatesList($status: TemplateStatus, $category: TemplateCategory, $language: String, $provider_app_id: String) {
    templates(status: $status, category: $category, language: $language, provider_app_id: $provider_app_id) {
      id
      template_name
      status
      components
    }
  }
`);

const CreateCadenceGql = graphql(`
  mutation TemplatesCreateCadence($name: String!) {
    createCadence(name: $name) {
      id
      name
    }
  }
`);

const CreateAssociationGql = graphql(`
  mutation TemplatesCreateAssociation($cadence_id: UUID!, $template_id: UUID!, $step_index: Int!, $message_index: Int!, $parameter_mapping: JSONObject) {
    createCadenceAssociation(cadence_id: $cadence_id, template_id: $template_id, step_index: $step_index, message_index: $message_index, parameter_mapping: $parameter_mapping) {
      id
      step_index
      parameter_mapping
      template {
        id
        template_name
        language
        status
      }
    }
  }
`);

const UpdateParamsGql = graphql(`
  mutation TemplatesUpdateParams($id: UUID!, $parameter_mapping: JSONObject!) {
    updateCadenceAssociationParams(id: $id, parameter_mapping: $parameter_mapping) {
      id
      parameter_mapping
    }
  }
`);

const PreviewGql = graphql(`
  query TemplatesPreview($id: UUID!, $lead_id: UUID!) {
    previewCadenceAssociation(id: $id, lead_id: $lead_id) {
      text
    }
  }
`);

const GraphGql = graphql(`
  query TemplatesGraph {
    cadences {
      name
      associations {
        nodes {
          step_index
          message_index
          template {
            template_name
          }
          cadence {
            name
          }
        }
      }
    }
    templates {
      template_name
      associations {
        nodes {
          step_index
          cadence {
            name
          }
        }
      }
    }
  }
`);

const DeleteAssociationGql = graphql(`
  mutation TemplatesDeleteAssociation($id: UUID!) {
    deleteCadenceAssociation(id: $id) {
      success
    }
  }
`);

const DeleteTemplateGql = graphql(`
  mutation TemplatesDeleteTemplate($id: UUID!) {
    deleteTemplate(id: $id) {
      success
    }
  }
`);

let org: Org;
let operator: string;

beforeAll(async () => {
  org = await api.newOrg();
  operator = await api.keyFor(org, 'operator');
});

describe('templates on /graphql', () => {
  it('syncs, lists with filters, associates, updates params, previews and deletes', async () => {
    const templates = [providerTemplate('g_um', { text: 'Oi {{1}}' }), providerTemplate('g_dois', { status: 'PENDING' })];
    const sync = await api.gql(SyncGql, { app_id: 'app-g', templates }, org.key);
    expect(sync.data?.syncTemplates).toEqual({ synced_count: 2, app_id: 'app-g' });

    const approved = await api.gql(TemplatesGql, { status: 'APPROVED', provider_app_id: 'app-g' }, operator);
    expect(approved.data?.templates.map((t) => t.template_name)).toEqual(['g_um']);
    const template = approved.data!.templates[0];
    expect(template.components).toEqual([{ type: 'BODY', text: 'Oi {{1}}' }]);

    const cadence = (await api.gql(CreateCadenceGql, { name: 'Graph' }, org.key)).data!.createCadence;
    const created = await api.gql(
      CreateAssociationGql,
      {
        cadence_id: cadence.id,
        template_id: template.id,
        step_index: 0,
        message_index: 0,
        parameter_mapping: { '1': '{{LEAD_FIRSTNAME}}' },
      },
      org.key,
    );
    const association = created.data!.createCadenceAssociation;
    expect(association.template).toEqual({ id: template.id, template_name: 'g_um', language: 'pt_BR', status: 'APPROVED' });

    const lead = await makeLead(api, org, { name: 'Bia Reis', company: 'Acme' });
    expect((await api.gql(PreviewGql, { id: association.id, lead_id: lead.id }, operator)).data?.previewCadenceAssociation.text).toBe(
      'Oi Bia',
    );
    const updated = await api.gql(UpdateParamsGql, { id: association.id, parameter_mapping: { '1': '{{COMPANY_NAME}}' } }, org.key);
    expect(updated.data?.updateCadenceAssociationParams.parameter_mapping).toEqual({ '1': '{{COMPANY_NAME}}' });
    expect((await api.gql(PreviewGql, { id: association.id, lead_id: lead.id }, org.key)).data?.previewCadenceAssociation.text).toBe(
      'Oi Acme',
    );

    expect((await api.gql(DeleteAssociationGql, { id: association.id }, org.key)).data?.deleteCadenceAssociation.success).toBe(true);
    expect((await api.gql(DeleteTemplateGql, { id: template.id }, org.key)).data?.deleteTemplate.success).toBe(true);
    expect((await api.gql(TemplatesGql, { provider_app_id: 'app-g' }, org.key)).data?.templates.map((t) => t.template_name)).toEqual([
      'g_dois',
    ]);
  });

  it('gives the same refusals: invalid sync, PENDING template, unknown variable, operator writes', async () => {
    const invalid = await api.gql(SyncGql, { app_id: 'app-x', templates: [providerTemplate('x', { category: 'OUTRA' })] }, org.key);
    expect(invalid.errors?.[0].extensions.code).toBe('INVALID_INPUT');
    const forbidden = await api.gql(SyncGql, { app_id: 'app-x', templates: [providerTemplate('x')] }, operator);
    expect(forbidden.errors?.[0].extensions.code).toBe('FORBIDDEN');
    expect((await api.gql(TemplatesGql, { provider_app_id: 'app-x' }, org.key)).data?.templates).toEqual([]);

    await api.gql(
      SyncGql,
      { app_id: 'app-y', templates: [providerTemplate('y_ok'), providerTemplate('y_pend', { status: 'PENDING' })] },
      org.key,
    );
    const listed = (await api.gql(TemplatesGql, { provider_app_id: 'app-y' }, org.key)).data!.templates;
    const [ok, pend] = ['y_ok', 'y_pend'].map((name) => listed.find((t) => t.template_name === name)!);
    const cadence = (await api.gql(CreateCadenceGql, { name: 'Recusas' }, org.key)).data!.createCadence;
    const base = { cadence_id: cadence.id, step_index: 0, message_index: 0 };
    const notApproved = await api.gql(CreateAssociationGql, { ...base, template_id: pend.id }, org.key);
    expect(notApproved.errors?.[0].extensions.code).toBe('INVALID_INPUT');
    const unknown = await api.gql(CreateAssociationGql, { ...base, template_id: ok.id, parameter_mapping: { '1': '{{FOO}}' } }, org.key);
    expect(unknown.errors?.[0].extensions.code).toBe('INVALID_INPUT');
    const byOperator = await api.gql(CreateAssociationGql, { ...base, template_id: ok.id }, operator);
    expect(byOperator.errors?.[0].extensions.code).toBe('FORBIDDEN');
    expect((await api.gql(CreateCadenceGql, { name: 'Nope' }, operator)).errors?.[0].extensions.code).toBe('FORBIDDEN');
  });

  it('walks Cadence.associations and Template.associations with the same number of statements for 2 or 12 associations', async () => {
    const own = await api.newOrg();
    const names = Array.from({ length: 6 }, (_, i) => `t${i}`);
    await api.gql(SyncGql, { app_id: 'app', templates: names.map((n) => providerTemplate(n)) }, own.key);
    const ids = (await api.gql(TemplatesGql, {}, own.key)).data!.templates.map((t) => t.id);
    const c1 = (await api.gql(CreateCadenceGql, { name: 'C1' }, own.key)).data!.createCadence;
    const associate = (cadenceId: string, templateId: string, step: number) =>
      api.gql(CreateAssociationGql, { cadence_id: cadenceId, template_id: templateId, step_index: step, message_index: 0 }, own.key);
    await associate(c1.id, ids[0], 1);
    await associate(c1.id, ids[1], 0);
    const small = await api.countStatements(() => api.gql(GraphGql, {}, own.key));

    const c2 = (await api.gql(CreateCadenceGql, { name: 'C2' }, own.key)).data!.createCadence;
    for (const [i, id] of ids.entries()) await associate(c2.id, id, i);
    const c3 = (await api.gql(CreateCadenceGql, { name: 'C3' }, own.key)).data!.createCadence;
    for (const [i, id] of ids.slice(0, 4).entries()) await associate(c3.id, id, i);
    let graph: any;
    const large = await api.countStatements(async () => (graph = await api.gql(GraphGql, {}, own.key)));
    expect(large).toBe(small);
    // 8, plus the one statement in which the cost estimate counts the root lists (cadences, templates).
    expect(large).toBeLessThanOrEqual(9);

    const cadences = graph.data.cadences;
    expect(cadences.map((c: any) => [c.name, c.associations.nodes.length])).toEqual([
      ['C1', 2],
      ['C2', 6],
      ['C3', 4],
    ]);
    expect(cadences[0].associations.nodes.map((a: any) => [a.step_index, a.template.template_name, a.cadence.name])).toEqual([
      [0, 't1', 'C1'],
      [1, 't0', 'C1'],
    ]);
    const t0 = graph.data.templates.find((t: any) => t.template_name === 't0');
    expect(t0.associations.nodes.map((a: any) => a.cadence.name).sort()).toEqual(['C1', 'C2', 'C3']);
  });
});
