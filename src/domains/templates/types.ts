// GraphQL types of templates and cadence associations (the cadence is the cadences domain's). Graph-only
// edges (Template.associations, CadenceAssociation.cadence) carry GRAPH_ONLY so REST
// answers keep the spec's shapes.
import { builder, GRAPH_ONLY } from '../../schema/builder.js';
import { TEMPLATE_CATEGORIES, TEMPLATE_STATUSES } from './sync.js';

export const TemplateStatus = builder.enumType('TemplateStatus', {
  description:
    'Review status reported by the provider: APPROVED, PENDING or REJECTED. Only APPROVED templates can be associated with a cadence.',
  values: TEMPLATE_STATUSES,
});

export const TemplateCategory = builder.enumType('TemplateCategory', {
  description: 'Template category: MARKETING, UTILITY or AUTHENTICATION.',
  values: TEMPLATE_CATEGORIES,
});

/** Cadence step order, used by every list of associations. */
const STEP_ORDER = [{ step_index: 'asc' }, { message_index: 'asc' }] as const;

export const Template = builder.prismaObject('Template', {
  description: 'A messaging template synchronised from the provider. Unique per organisation, provider app, name and language.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    tenant_id: t.expose('tenant_id', { type: 'UUID', description: 'The organisation.' }),
    provider_app_id: t.exposeString('provider_app_id', { description: 'The provider app the template belongs to (the sync’s app_id).' }),
    template_name: t.exposeString('template_name', { description: 'Name at the provider.' }),
    template_id: t.exposeString('template_id', { description: 'The provider’s identifier of the template.' }),
    language: t.exposeString('language', { description: 'Language code, e.g. pt_BR or en.' }),
    status: t.expose('status', { type: TemplateStatus }),
    category: t.expose('category', { type: TemplateCategory }),
    components: t.field({
      type: ['JSONObject'],
      description: 'Components as the provider sent them: `type` (e.g. BODY) and `text` with numbered placeholders {{1}}, {{2}}…',
      select: { components: true },
      resolve: (template) => template.components as Record<string, unknown>[],
    }),
    last_synced_at: t.expose('last_synced_at', { type: 'DateTime', description: 'When a sync last created or updated it.' }),
    updated_at: t.expose('updated_at', {
      type: 'DateTime',
      description: 'Its last change (a sync, an edit): what `updated_since` compares.',
    }),
    associations: t.relatedConnection('associations', {
      cursor: 'id',
      extensions: GRAPH_ONLY,
      description: 'Cadence steps that send this template (at most 100 per page).',
      maxSize: 100,
      defaultSize: 20,
      totalCount: true,
      query: { orderBy: [{ cadence_id: 'asc' }, ...STEP_ORDER, { id: 'asc' }] },
    }),
  }),
});

/** The template embedded in an association: the four fields the spec shows. */
export const TemplateSummary = builder.prismaObject('Template', {
  variant: 'TemplateSummary',
  description: 'The template an association sends: id, name, language and status.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    template_name: t.exposeString('template_name'),
    language: t.exposeString('language'),
    status: t.expose('status', { type: TemplateStatus }),
  }),
});

export const CadenceAssociation = builder.prismaObject('CadenceAssociation', {
  description: 'Which template a cadence step’s message sends, and how its placeholders are filled.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    tenant_id: t.expose('tenant_id', { type: 'UUID', description: 'The organisation.' }),
    cadence_id: t.expose('cadence_id', { type: 'UUID' }),
    step_index: t.exposeInt('step_index', { description: 'The cadence step (0 or more).' }),
    message_index: t.exposeInt('message_index', { description: 'The message within the step (0 or more).' }),
    template_id: t.expose('template_id', { type: 'UUID' }),
    parameter_mapping: t.field({
      type: 'JSONObject',
      description:
        'Placeholder number ("1", "2"…) → literal text or variables: {{LEAD_NAME}}, {{LEAD_FIRSTNAME}}, {{LEAD_NUMBER}}, {{COMPANY_NAME}}, {{LEAD_FIELD_<key>}}.',
      select: { parameter_mapping: true },
      resolve: (association) => association.parameter_mapping as Record<string, unknown>,
    }),
    template: t.relation('template', { type: TemplateSummary, description: 'The template: id, template_name, language and status.' }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    cadence: t.relation('cadence', { extensions: GRAPH_ONLY, description: 'The cadence.' }),
  }),
});

export const TemplateSyncResult = builder.objectRef<{ synced_count: number; app_id: string }>('TemplateSyncResult').implement({
  description: 'What a sync did.',
  fields: (t) => ({
    synced_count: t.exposeInt('synced_count', { description: 'Templates created or updated.' }),
    app_id: t.exposeString('app_id', { description: 'The provider app synchronised.' }),
  }),
});

export const TemplatePreview = builder.objectRef<{ text: string }>('TemplatePreview').implement({
  description: 'A cadence message as a lead would receive it.',
  fields: (t) => ({
    text: t.exposeString('text', { description: 'The template’s body with each placeholder filled for the lead.' }),
  }),
});

export const TemplateSyncItem = builder.inputType('TemplateSyncItem', {
  description: 'One template as the provider reports it. Every item is checked before anything is written.',
  fields: (t) => ({
    id: t.string({ required: true, description: 'The provider’s identifier (stored as template_id).' }),
    name: t.string({ required: true, description: 'Template name (stored as template_name).' }),
    language: t.string({ required: true, description: 'Language code, e.g. pt_BR.' }),
    status: t.string({ required: true, description: 'APPROVED, PENDING or REJECTED; anything else refuses the whole sync.' }),
    category: t.string({ required: true, description: 'MARKETING, UTILITY or AUTHENTICATION; anything else refuses the whole sync.' }),
    components: t.field({
      type: ['JSONObject'],
      required: true,
      description: 'Components, each with a `type` and optionally a `text`; stored as sent.',
    }),
  }),
});
