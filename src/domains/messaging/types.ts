// GraphQL types of messaging: departments and members, channels, conversations and messages.
// Graph-only edges carry GRAPH_ONLY so REST answers keep the spec's shapes.
import { builder, GRAPH_ONLY } from '../../schema/builder.js';
import type { DepartmentListSource } from './departments.js';

export const Department = builder.prismaObject('Department', {
  description: 'A team of users. Operators see the conversations of their departments and those without a department.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    tenant_id: t.expose('tenant_id', { type: 'UUID', description: 'The organisation.' }),
    name: t.exposeString('name', { description: '1 to 100 characters, unique in the organisation.' }),
    description: t.exposeString('description', { nullable: true }),
    member_count: t.relationCount('members', { description: 'Users in the department.' }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    updated_at: t.expose('updated_at', { type: 'DateTime' }),
  }),
});

export const DepartmentMember = builder.prismaObject('DepartmentMember', {
  description: 'A user’s membership of a department.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    department_id: t.expose('department_id', { type: 'UUID' }),
    user_id: t.expose('user_id', { type: 'UUID' }),
    user_name: t.string({ description: 'The user’s name.', select: { user: { select: { name: true } } }, resolve: (m) => m.user.name }),
    user_email: t.string({ description: 'The user’s email.', select: { user: { select: { email: true } } }, resolve: (m) => m.user.email }),
    created_at: t.expose('created_at', { type: 'DateTime', description: 'When the user joined.' }),
  }),
});

builder.prismaObjectField('Department', 'members', (t) =>
  t.relation('members', {
    extensions: GRAPH_ONLY,
    description: 'The department’s members, oldest first.',
    query: { orderBy: [{ created_at: 'asc' }, { id: 'asc' }] },
  }),
);

export const DepartmentList = builder.objectRef<DepartmentListSource>('DepartmentList').implement({
  description: 'Departments, by name.',
  fields: (t) => ({
    data: t.prismaField({
      type: [Department],
      resolve: (query, list, _args, ctx) => ctx.db.department.findMany({ ...query, where: list.where, orderBy: [{ name: 'asc' }, { id: 'asc' }] }),
    }),
  }),
});

export const DepartmentMemberList = builder.objectRef<{ departmentId: string }>('DepartmentMemberList').implement({
  description: 'A department’s members, oldest first.',
  fields: (t) => ({
    data: t.prismaField({
      type: [DepartmentMember],
      resolve: (query, list, _args, ctx) =>
        ctx.db.departmentMember.findMany({ ...query, where: { department_id: list.departmentId }, orderBy: [{ created_at: 'asc' }, { id: 'asc' }] }),
    }),
  }),
});

export const Acknowledgement = builder.objectRef<{ message: string }>('Acknowledgement').implement({
  description: 'Confirms an operation with a message (in Portuguese).',
  fields: (t) => ({ message: t.exposeString('message') }),
});

export const ChannelProviderEnum = builder.enumType('ChannelProvider', {
  description: '`test` accepts every send; `whatsapp_cloud` sends through the WhatsApp Cloud API.',
  values: { test: { value: 'test' }, whatsapp_cloud: { value: 'whatsapp_cloud' } } as const,
});

export const ChannelConfigInput = builder.inputType('ChannelConfigInput', {
  description: 'Provider settings, write-only (never returned). whatsapp_cloud: phone_number_id and access_token are required.',
  fields: (t) => ({
    api_url: t.string({ description: 'Base URL of the Graph API; default https://graph.facebook.com/v21.0.' }),
    phone_number_id: t.string({ description: 'The WhatsApp Business phone number id.' }),
    access_token: t.string({ description: 'Bearer token for the Graph API.' }),
    app_secret: t.string({ description: 'The app secret: signs the provider’s webhooks (X-Hub-Signature-256).' }),
    verify_token: t.string({ description: 'The token the provider echoes when verifying the webhook URL.' }),
  }),
});

export const Channel = builder.prismaObject('Channel', {
  description: 'A messaging channel. Its provider configuration is write-only and never returned.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    name: t.exposeString('name'),
    provider: t.expose('provider', { type: ChannelProviderEnum }),
    department_id: t.expose('department_id', { type: 'UUID', nullable: true, description: 'New conversations of this channel get this department.' }),
    active: t.exposeBoolean('active', { description: 'Inactive channels do not send.' }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
  }),
});
