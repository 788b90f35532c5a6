// GraphQL types of cadences and their enrolments. The graph-only edges (Cadence.associations,
// Cadence.enrolments, Lead.cadence_enrolments, CadenceEnrolment.cadence and .lead) carry GRAPH_ONLY so
// REST answers keep their documented shapes.
import { builder, GRAPH_ONLY } from '../../schema/builder.js';
import { OffsetPagination, offsetPagination } from '../common/types.js';
import { listCap } from '../../schema/list-bounds.js';
import { MAX_ENROLMENTS_PER_REQUEST, MAX_STEPS } from './limits.js';
import type { SendWindow as SendWindowValue } from './send-window.js';

export const STOP_REASONS = [
  'replied',
  'unenrolled',
  'deal_won',
  'deal_lost',
  'cadence_deleted',
  'send_failed',
  'template_not_approved',
] as const;
export type StopReason = (typeof STOP_REASONS)[number];

export const EnrolmentStatus = builder.enumType('EnrolmentStatus', {
  description: 'active (steps still to send), completed (every step sent), stopped (ended early) or failed (a send failed).',
  values: ['active', 'completed', 'stopped', 'failed'] as const,
});

export const StopReason = builder.enumType('EnrolmentStopReason', {
  description:
    'Why an enrolment ended early: replied (the lead wrote, with stop_on_reply), unenrolled, deal_won, deal_lost, cadence_deleted; or why it failed: send_failed, template_not_approved.',
  values: STOP_REASONS,
});

export const CadenceStep = builder.objectRef<{ delay_seconds: number }>('CadenceStep').implement({
  description: 'One step of a cadence: its messages are the cadence associations with this step_index.',
  fields: (t) => ({
    delay_seconds: t.exposeInt('delay_seconds', {
      description: 'Seconds after the previous step was sent (step 0: after enrolment), 0 to 7,776,000 (90 days).',
    }),
  }),
});

export const SendWindow = builder.objectRef<SendWindowValue>('SendWindow').implement({
  description: 'When a cadence’s messages may go out, in its time zone; a send due outside it waits for its next opening.',
  fields: (t) => ({
    timezone: t.exposeString('timezone', { description: 'IANA time zone, e.g. America/Sao_Paulo.' }),
    days: t.exposeIntList('days', { description: 'ISO weekdays, Monday = 1 … Sunday = 7.' }),
    from: t.exposeString('from', { description: 'Opening time, HH:MM local (inclusive).' }),
    to: t.exposeString('to', { description: 'Closing time, HH:MM local (exclusive), after from.' }),
  }),
});

export const CadenceStepInput = builder.inputType('CadenceStepInput', {
  description: 'One step of a cadence.',
  fields: (t) => ({
    delay_seconds: t.int({ required: true, description: 'Seconds after the previous step (step 0: after enrolment), 0 to 7,776,000.' }),
  }),
});

export const SendWindowInput = builder.inputType('SendWindowInput', {
  description: 'A send window: days and hours in a time zone.',
  fields: (t) => ({
    timezone: t.string({ required: true, description: 'IANA time zone, e.g. America/Sao_Paulo.' }),
    days: t.intList({ required: true, description: 'ISO weekdays, Monday = 1 … Sunday = 7 (at least one).' }),
    from: t.string({ required: true, description: 'HH:MM, local.' }),
    to: t.string({ required: true, description: 'HH:MM, local, after from.' }),
  }),
});

export const Cadence = builder.prismaObject('Cadence', {
  description:
    'A sequence of steps sent to enrolled leads; each step’s messages are approved templates (cadence associations), sent in message_index order.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    name: t.exposeString('name'),
    steps: t.field({
      type: [CadenceStep],
      extensions: listCap(MAX_STEPS),
      select: { steps: true },
      resolve: (cadence) => cadence.steps as { delay_seconds: number }[],
    }),
    stop_on_reply: t.exposeBoolean('stop_on_reply', { description: 'An inbound message from the lead stops its enrolment.' }),
    send_window: t.field({
      type: SendWindow,
      nullable: true,
      description: 'null: any time.',
      select: { send_window: true },
      resolve: (cadence) => cadence.send_window as SendWindowValue | null,
    }),
    active: t.exposeBoolean('active', { description: 'false: paused, nothing is sent until it is true again.' }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    updated_at: t.expose('updated_at', { type: 'DateTime' }),
    associations: t.relatedConnection('associations', {
      cursor: 'id',
      extensions: GRAPH_ONLY,
      description: 'The cadence’s templates, by step and message (at most 100 per page).',
      maxSize: 100,
      defaultSize: 20,
      totalCount: true,
      query: { orderBy: [{ step_index: 'asc' }, { message_index: 'asc' }, { id: 'asc' }] },
    }),
    enrolments: t.relatedConnection('enrolments', {
      cursor: 'id',
      extensions: GRAPH_ONLY,
      description: 'Its enrolments, oldest first (at most 100 per page).',
      maxSize: 100,
      defaultSize: 20,
      totalCount: true,
      query: { orderBy: [{ created_at: 'asc' }, { id: 'asc' }] },
    }),
  }),
});

export const CadenceEnrolment = builder.prismaObject('CadenceEnrolment', {
  description: 'A lead in a cadence: where it is, when its next step goes, and why it ended.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    cadence_id: t.expose('cadence_id', { type: 'UUID' }),
    lead_id: t.expose('lead_id', { type: 'UUID' }),
    status: t.expose('status', { type: EnrolmentStatus }),
    current_step: t.exposeInt('current_step', { description: 'The index of the next step to send; the number of steps once completed.' }),
    next_send_at: t.expose('next_send_at', {
      type: 'DateTime',
      nullable: true,
      description: 'When the next step is due (its send window applied); null once it ended.',
    }),
    stop_reason: t.field({
      type: StopReason,
      nullable: true,
      select: { stop_reason: true },
      resolve: (e) => e.stop_reason as StopReason | null,
    }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    updated_at: t.expose('updated_at', { type: 'DateTime' }),
    cadence: t.relation('cadence', { extensions: GRAPH_ONLY }),
    lead: t.relation('lead', { extensions: GRAPH_ONLY }),
  }),
});

builder.prismaObjectField('Lead', 'cadence_enrolments', (t) =>
  t.relatedConnection('cadence_enrolments', {
    cursor: 'id',
    extensions: GRAPH_ONLY,
    description: 'The lead’s cadence enrolments, newest first (at most 100 per page).',
    maxSize: 100,
    defaultSize: 20,
    totalCount: true,
    query: { orderBy: [{ created_at: 'desc' }, { id: 'desc' }] },
  }),
);

export const EnrolmentSkip = builder.objectRef<{ lead_id: string; reason: string }>('EnrolmentSkip').implement({
  description: 'A lead an enrolment request did not enrol, and why: already_enrolled, not_found or no_recipient (neither phone nor BSUID).',
  fields: (t) => ({
    lead_id: t.exposeString('lead_id'),
    reason: t.exposeString('reason'),
  }),
});

export interface EnrolResult {
  enrolled: { id: string }[];
  skipped: { lead_id: string; reason: string }[];
}

export const EnrolmentResult = builder.objectRef<EnrolResult>('EnrolmentResult').implement({
  description: 'What an enrolment request did, per lead: enrolled, or skipped with a reason.',
  fields: (t) => ({
    enrolled: t.prismaField({
      type: [CadenceEnrolment],
      extensions: listCap(MAX_ENROLMENTS_PER_REQUEST),
      resolve: (query, result, _args, ctx) =>
        result.enrolled.length
          ? ctx.db.cadenceEnrolment
              .findMany({ ...query, where: { id: { in: result.enrolled.map((e) => e.id) } } })
              .then((rows) => result.enrolled.map((e) => rows.find((r) => r.id === e.id)!))
          : [],
    }),
    skipped: t.field({ type: [EnrolmentSkip], extensions: listCap(MAX_ENROLMENTS_PER_REQUEST), resolve: (result) => result.skipped }),
  }),
});

export interface EnrolmentPageSource {
  cadenceId: string;
  status: string | null;
  limit: number;
  offset: number;
}

export const EnrolmentPage = builder.objectRef<EnrolmentPageSource>('CadenceEnrolmentPage').implement({
  description: 'A page of a cadence’s enrolments, oldest first.',
  fields: (t) => ({
    data: t.prismaField({
      type: [CadenceEnrolment],
      resolve: (query, page, _args, ctx) =>
        ctx.db.cadenceEnrolment.findMany({
          ...query,
          where: enrolmentFilter(page),
          orderBy: [{ created_at: 'asc' }, { id: 'asc' }],
          skip: page.offset,
          take: page.limit,
        }),
    }),
    pagination: t.field({
      type: OffsetPagination,
      resolve: async (page, _args, ctx) => offsetPagination(await ctx.db.cadenceEnrolment.count({ where: enrolmentFilter(page) }), page),
    }),
  }),
});

function enrolmentFilter(page: EnrolmentPageSource) {
  return { cadence_id: page.cadenceId, ...(page.status ? { status: page.status as 'active' } : {}) };
}
