// Root fields of cadences and enrolments: thin; the rules live in cadences.ts, enrolments.ts,
// send-window.ts and scheduler.ts.
import { builder } from '../../schema/builder.js';
import { listCount } from '../../schema/list-bounds.js';
import { idArg } from '../common/args.js';
import { SUCCESS, Success } from '../common/types.js';
import * as cadences from './cadences.js';
import { enrolLeads, enrolmentPage, unenrolLead } from './enrolments.js';
import { MAX_ENROLMENTS_PER_REQUEST } from './limits.js';
import { Cadence, CadenceStepInput, EnrolmentPage, EnrolmentResult, EnrolmentStatus, SendWindowInput } from './types.js';

builder.queryField('cadences', (t) =>
  t.prismaField({
    type: [Cadence],
    extensions: listCount('cadences'),
    description: 'Cadences of the organisation, oldest first.',
    resolve: (query, _root, _args, ctx) => cadences.listCadences(ctx, query),
  }),
);

builder.queryField('cadence', (t) =>
  t.prismaField({
    type: Cadence,
    description: 'One cadence with its steps and send window.',
    args: idArg('The cadence.'),
    resolve: (query, _root, args, ctx) => cadences.getCadence(ctx, args.id, query),
  }),
);

const cadenceArgs = (t: Parameters<Parameters<typeof builder.mutationField>[1]>[0]) => ({
  steps: t.arg({
    type: [CadenceStepInput],
    description: 'The steps, in order (at most 50); step k sends the associations with step_index k. Given, it replaces the list.',
  }),
  stop_on_reply: t.arg.boolean({ description: 'An inbound message from the lead stops its enrolment. Default true.' }),
  send_window: t.arg({
    type: SendWindowInput,
    description: 'When messages may go out (null: any time, the default). A send due outside it waits for its next opening.',
  }),
  active: t.arg.boolean({ description: 'false pauses it: nothing is sent until it is true again. Default true.' }),
});

builder.mutationField('createCadence', (t) =>
  t.prismaField({
    type: Cadence,
    description: 'Creates a cadence (owner/admin).',
    args: { name: t.arg.string({ required: true, description: 'Up to 255 characters.' }), ...cadenceArgs(t) },
    resolve: (query, _root, args, ctx) => cadences.createCadence(ctx, args, query),
  }),
);

builder.mutationField('updateCadence', (t) =>
  t.prismaField({
    type: Cadence,
    description:
      'Changes the fields given (owner/admin). Resuming a paused cadence queues each active enrolment’s next step, due when it was (or now). New delays apply to the steps scheduled after the change.',
    args: { ...idArg('The cadence.'), name: t.arg.string({ description: 'Up to 255 characters.' }), ...cadenceArgs(t) },
    resolve: (query, _root, args, ctx) => cadences.updateCadence(ctx, args.id, args, query),
  }),
);

builder.mutationField('deleteCadence', (t) =>
  t.field({
    type: Success,
    description:
      'Deletes a cadence with its associations and enrolments (owner/admin); active enrolments stop first (cadence.stopped, cadence_deleted).',
    args: idArg('The cadence.'),
    resolve: async (_root, args, ctx) => (await cadences.deleteCadence(ctx, args.id), SUCCESS),
  }),
);

builder.mutationField('enrolLeads', (t) =>
  t.field({
    type: EnrolmentResult,
    description: `Enrols leads in a cadence (owner/admin): at most ${MAX_ENROLMENTS_PER_REQUEST.toLocaleString('en')} a request, one result per lead. Step 0 is due its delay after now (send window applied).`,
    args: {
      ...idArg('The cadence.'),
      lead_ids: t.arg({ type: ['UUID'], required: true, description: 'Leads of the organisation (duplicates count once).' }),
      channel_id: t.arg({
        type: 'UUID',
        description: 'An active channel for its messages; default: the lead’s open conversation’s, else the oldest active one.',
      }),
    },
    resolve: (_root, args, ctx) => enrolLeads(ctx, args.id, args),
  }),
);

builder.queryField('cadenceEnrolments', (t) =>
  t.field({
    type: EnrolmentPage,
    description: 'A cadence’s enrolments, oldest first.',
    args: {
      ...idArg('The cadence.'),
      status: t.arg({ type: EnrolmentStatus, description: 'Only enrolments with this status.' }),
      limit: t.arg.int({ description: '1 to 100, default 20.' }),
      offset: t.arg.int({ description: 'Default 0.' }),
    },
    resolve: (_root, args, ctx) => enrolmentPage(ctx, args.id, args),
  }),
);

builder.mutationField('unenrolLead', (t) =>
  t.field({
    type: Success,
    description: 'Takes a lead out of a cadence (owner/admin): its active enrolment stops (cadence.stopped, unenrolled).',
    args: { ...idArg('The cadence.'), lead_id: t.arg({ type: 'UUID', required: true, description: 'The enrolled lead.' }) },
    resolve: async (_root, args, ctx) => (await unenrolLead(ctx, args.id, args.lead_id), SUCCESS),
  }),
);
