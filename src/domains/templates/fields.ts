// Root fields of templates and cadence associations: thin; the rules live in sync.ts, templates.ts,
// associations.ts, mapping.ts and render.ts (the cadence itself is the cadences domain's).
import { syncArrayArgs } from '../common/sync.js';
import { idArg } from '../common/args.js';
import { listCount } from '../../schema/list-bounds.js';
import { builder } from '../../schema/builder.js';
import { SUCCESS, Success } from '../common/types.js';
import * as associations from './associations.js';
import { syncTemplates } from './sync.js';
import * as templates from './templates.js';
import { sendTemplate } from './send.js';
import { Message } from '../messaging/types.js';
import {
  CadenceAssociation,
  Template,
  TemplateCategory,
  TemplatePreview,
  TemplateStatus,
  TemplateSyncItem,
  TemplateSyncResult,
} from './types.js';

builder.queryField('templates', (t) =>
  t.prismaField({
    type: [Template],
    extensions: listCount('templates'),

    description:
      'Templates of the organisation, by name and language; every filter given must match. With `updated_since` or `cursor`, a sync page: by updated_at, id ascending.',
    args: {
      ...syncArrayArgs,
      provider_app_id: t.arg.string({ description: 'Only templates of this provider app.' }),
      status: t.arg({ type: TemplateStatus, description: 'Only templates with this status.' }),
      category: t.arg({ type: TemplateCategory, description: 'Only templates of this category.' }),
      language: t.arg.string({ description: 'Only templates in this language (exact code, e.g. pt_BR).' }),
    },
    resolve: (query, _root, args, ctx) => templates.listTemplates(ctx, args, query),
  }),
);

builder.queryField('template', (t) =>
  t.prismaField({
    type: Template,
    description: 'One template with all its components.',
    args: idArg('The template.'),
    resolve: (query, _root, args, ctx) => templates.getTemplate(ctx, args.id, query),
  }),
);

builder.mutationField('syncTemplates', (t) =>
  t.field({
    type: TemplateSyncResult,
    description:
      'Creates and updates the templates of one provider app (owner/admin), by organisation, app, name and language: an existing template keeps its id. Templates missing from the list are kept. One invalid template refuses the whole sync.',
    args: {
      app_id: t.arg.string({ required: true, description: 'The provider app.' }),
      templates: t.arg({ type: [TemplateSyncItem], required: true, description: 'The provider’s templates (at most 5,000).' }),
    },
    resolve: (_root, args, ctx) => syncTemplates(ctx, args),
  }),
);

builder.mutationField('deleteTemplate', (t) =>
  t.field({
    type: Success,
    description: 'Deletes a template and its cadence associations (owner/admin).',
    args: idArg('The template.'),
    resolve: async (_root, args, ctx) => (await templates.deleteTemplate(ctx, args.id), SUCCESS),
  }),
);

builder.queryField('cadenceAssociations', (t) =>
  t.prismaField({
    type: [CadenceAssociation],
    extensions: listCount('cadence_associations', (args) => ({ cadence_id: args.cadence_id })),

    description: 'Cadence associations by cadence, step and message.',
    args: { cadence_id: t.arg({ type: 'UUID', description: 'Only this cadence’s associations; without it, all of the organisation.' }) },
    resolve: (query, _root, args, ctx) => associations.listAssociations(ctx, args, query),
  }),
);

const mappingDescription =
  'Placeholder number of the template ("1", "2"…) → literal text or variables ({{LEAD_NAME}}, {{LEAD_FIRSTNAME}}, {{LEAD_NUMBER}}, {{COMPANY_NAME}}, {{LEAD_FIELD_<key>}}). Other keys or unknown variables are refused.';

builder.mutationField('createCadenceAssociation', (t) =>
  t.prismaField({
    type: CadenceAssociation,
    description:
      'Makes a cadence step’s message send a template (owner/admin). The template must be APPROVED; one template per step and message.',
    args: {
      cadence_id: t.arg({ type: 'UUID', required: true, description: 'A cadence of the organisation.' }),
      step_index: t.arg.int({ required: true, description: 'The cadence step (0 or more).' }),
      message_index: t.arg.int({ required: true, description: 'The message within the step (0 or more).' }),
      template_id: t.arg({ type: 'UUID', required: true, description: 'An APPROVED template of the organisation.' }),
      parameter_mapping: t.arg({ type: 'JSONObject', description: mappingDescription }),
    },
    resolve: (query, _root, args, ctx) => associations.createAssociation(ctx, args, query),
  }),
);

builder.mutationField('updateCadenceAssociationParams', (t) =>
  t.prismaField({
    type: CadenceAssociation,
    description: 'Replaces an association’s parameter_mapping (owner/admin).',
    args: {
      ...idArg('The association.'),
      parameter_mapping: t.arg({ type: 'JSONObject', required: true, description: mappingDescription }),
    },
    resolve: (query, _root, args, ctx) => associations.updateAssociationParams(ctx, args.id, args.parameter_mapping, query),
  }),
);

builder.mutationField('deleteCadenceAssociation', (t) =>
  t.field({
    type: Success,
    description: 'Removes a template from a cadence step (owner/admin).',
    args: idArg('The association.'),
    resolve: async (_root, args, ctx) => (await associations.deleteAssociation(ctx, args.id), SUCCESS),
  }),
);

builder.queryField('previewCadenceAssociation', (t) =>
  t.field({
    type: TemplatePreview,
    description:
      'The association’s message as a lead would receive it: the template’s body with each placeholder filled from parameter_mapping (a missing custom field is empty; an unmapped placeholder stays as written).',
    args: { ...idArg('The association.'), lead_id: t.arg({ type: 'UUID', required: true, description: 'A lead of the organisation.' }) },
    resolve: (_root, args, ctx) => associations.previewAssociation(ctx, args.id, args.lead_id),
  }),
);

builder.mutationField('sendTemplateMessage', (t) =>
  t.prismaField({
    type: Message,
    description:
      'Sends an APPROVED template to a lead, inside or outside the 24-hour window: stored `pending` (type `template`, content the rendered body) in the lead’s open conversation (created if none) and delivered in the background as a WhatsApp template message. Every placeholder of the body must get a non-empty value. Channel choice as for sendMessage.',
    args: {
      lead_id: t.arg({ type: 'UUID', required: true, description: 'The lead.' }),
      template_id: t.arg({ type: 'UUID', required: true, description: 'An APPROVED template of the organisation.' }),
      parameters: t.arg({
        type: 'JSONObject',
        description:
          'The body’s values by placeholder number, like a cadence association’s parameter_mapping: {"1": "literal" or "{{VARIABLE}}"}, rendered for the lead.',
      }),
      channel_id: t.arg({ type: 'UUID', description: 'An active channel of the organisation.' }),
    },
    resolve: (query, _, args, ctx) =>
      sendTemplate(ctx, args).then((m) => ctx.db.message.findUniqueOrThrow({ ...query, where: { id: m.id } })),
  }),
);
