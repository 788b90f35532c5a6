import { builder } from '../../schema/builder.js';

export const RoleEnum = builder.enumType('Role', {
  description: 'A user’s role. owner and admin hold every permission; operator works leads, conversations and deals.',
  values: { owner: { value: 'owner' }, admin: { value: 'admin' }, operator: { value: 'operator' } } as const,
});

export const AvailabilityEnum = builder.enumType('UserAvailability', {
  description: 'Whether routing may hand the user conversations: only when `online`. An `offline` user keeps their conversations.',
  values: { online: { value: 'online' }, away: { value: 'away' }, offline: { value: 'offline' } } as const,
});

const CAPACITY =
  'Open conversations routing may assign the user at once; null: no limit, 0: none. Owners and admins may assign past it by hand.';

export const Tenant = builder.prismaObject('Tenant', {
  description: 'An organisation: every other record belongs to exactly one.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    name: t.exposeString('name'),
    created_at: t.expose('created_at', { type: 'DateTime' }),
  }),
});

export const User = builder.prismaObject('User', {
  description: 'A person of the organisation.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    name: t.exposeString('name'),
    email: t.exposeString('email'),
    role: t.expose('role', { type: RoleEnum }),
    availability: t.expose('availability', { type: AvailabilityEnum }),
    capacity: t.exposeInt('capacity', { nullable: true, description: CAPACITY }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
  }),
});

export const ApiKey = builder.prismaObject('ApiKey', {
  description: 'An API key, without its secret: only a hash is stored.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    name: t.exposeString('name'),
    prefix: t.exposeString('prefix', { description: 'First characters of the key, to tell keys apart.' }),
    user_id: t.expose('user_id', { type: 'UUID' }),
    permissions: t.exposeStringList('permissions', {
      description: 'Narrows the user’s role to these permissions; empty means the role’s own.',
    }),
    expires_at: t.expose('expires_at', { type: 'DateTime', nullable: true }),
    last_used_at: t.expose('last_used_at', { type: 'DateTime', nullable: true, description: 'Updated at most every five minutes.' }),
    revoked_at: t.expose('revoked_at', { type: 'DateTime', nullable: true }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
  }),
});

type CreatedKey = {
  id: string;
  name: string;
  key: string;
  prefix: string;
  user_id: string;
  permissions: string[];
  expires_at: Date | null;
  created_at: Date;
};

export const CreatedApiKey = builder.objectRef<CreatedKey>('CreatedApiKey').implement({
  description: 'A new API key. `key` is shown only here, once.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    name: t.exposeString('name'),
    key: t.exposeString('key', {
      nullable: true,
      description:
        'The secret. Store it now: it cannot be read again (null in an Idempotency-Key replay of this answer: it is shown once).',
    }),
    prefix: t.exposeString('prefix'),
    user_id: t.expose('user_id', { type: 'UUID' }),
    permissions: t.exposeStringList('permissions'),
    expires_at: t.expose('expires_at', { type: 'DateTime', nullable: true }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
  }),
});

export const CreatedTenant = builder
  .objectRef<{
    tenant: { id: string; name: string; created_at: Date };
    user: { id: string; name: string; email: string; role: string; availability: string; capacity: number | null };
    api_key: string;
  }>('CreatedTenant')
  .implement({
    description: 'A new organisation with its Owner and the Owner’s first API key.',
    fields: (t) => ({
      tenant: t.field({ type: Tenant, resolve: (r) => r.tenant as never }),
      user: t.field({ type: User, resolve: (r) => r.user as never }),
      api_key: t.exposeString('api_key', { description: 'The Owner’s API key, shown only here.' }),
    }),
  });

export const ViewerUser = builder
  .objectRef<{ id: string; name: string; email: string; role: string; availability: string; capacity: number | null }>('ViewerUser')
  .implement({
    description: 'The user an API key belongs to.',
    fields: (t) => ({
      id: t.expose('id', { type: 'UUID' }),
      name: t.exposeString('name'),
      email: t.exposeString('email'),
      role: t.field({ type: RoleEnum, resolve: (u) => u.role as 'owner' | 'admin' | 'operator' }),
      availability: t.field({ type: AvailabilityEnum, resolve: (u) => u.availability as 'online' | 'away' | 'offline' }),
      capacity: t.exposeInt('capacity', { nullable: true, description: CAPACITY }),
    }),
  });

export const ViewerTenant = builder.objectRef<{ id: string; name: string }>('ViewerTenant').implement({
  description: 'The organisation of an API key.',
  fields: (t) => ({ id: t.expose('id', { type: 'UUID' }), name: t.exposeString('name') }),
});

type ViewerKeyShape = { id: string; name: string; prefix: string; permissions: string[]; expires_at: Date | null };

export const ViewerApiKey = builder.objectRef<ViewerKeyShape>('ViewerApiKey').implement({
  description: 'The API key of the request.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    name: t.exposeString('name'),
    prefix: t.exposeString('prefix'),
    permissions: t.exposeStringList('permissions', {
      description: 'What this key may do: its own list, or its user’s role’s permissions for a full key.',
    }),
    expires_at: t.expose('expires_at', { type: 'DateTime', nullable: true }),
  }),
});

export const ViewerInfo = builder
  .objectRef<{
    user: { id: string; name: string; email: string; role: string; availability: string; capacity: number | null };
    tenant: { id: string; name: string };
    api_key: ViewerKeyShape;
  }>('Viewer')
  .implement({
    description: 'Who is calling: the key’s user, organisation and the key itself.',
    fields: (t) => ({
      user: t.field({ type: ViewerUser, resolve: (v) => v.user }),
      tenant: t.field({ type: ViewerTenant, resolve: (v) => v.tenant }),
      api_key: t.field({ type: ViewerApiKey, resolve: (v) => v.api_key }),
    }),
  });
