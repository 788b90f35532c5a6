import { listCount } from '../../schema/list-bounds.js';
import { builder } from '../../schema/builder.js';
import { idArg } from '../common/args.js';
import { ApiKey, AvailabilityEnum, CreatedApiKey, CreatedTenant, RoleEnum, User, ViewerInfo, ViewerUser } from './types.js';
import * as accounts from './service.js';

builder.mutationField('createTenant', (t) =>
  t.field({
    type: CreatedTenant,
    description: 'Platform operator only (ADMIN_TOKEN): creates an organisation, its Owner and an API key.',
    args: { name: t.arg.string({ required: true }), owner_name: t.arg.string(), owner_email: t.arg.string() },
    resolve: (_, args, ctx) => accounts.createTenantAsAdmin(ctx, args),
  }),
);

builder.queryField('users', (t) =>
  t.prismaField({
    type: [User],
    extensions: listCount('users'),
    description: 'Users of the organisation (Owner/Admin).',
    resolve: (query, _, __, ctx) => accounts.listUsers(ctx, query),
  }),
);

builder.mutationField('createUser', (t) =>
  t.field({
    type: User,
    description: 'Adds a user (Owner/Admin). Email is unique per organisation.',
    args: {
      name: t.arg.string({ required: true }),
      email: t.arg.string({ required: true }),
      role: t.arg({ type: RoleEnum, required: true }),
    },
    resolve: (_, args, ctx) => accounts.createUser(ctx, args),
  }),
);

builder.queryField('viewer', (t) =>
  t.field({
    type: ViewerInfo,
    description: 'Who is calling: the API key’s user, organisation, and the key with the permissions it grants. Any valid key.',
    resolve: (_, __, ctx) => accounts.whoAmI(ctx),
  }),
);

builder.mutationField('updateUser', (t) =>
  t.prismaField({
    type: User,
    description:
      'Changes a user’s name, e-mail, role, availability or capacity (Owner/Admin with a full key). Only an owner changes an owner or makes one; the last owner cannot be demoted (409).',
    args: {
      ...idArg('The user.'),
      name: t.arg.string(),
      email: t.arg.string({ description: 'Unique per organisation (409).' }),
      role: t.arg({ type: RoleEnum }),
      availability: t.arg({
        type: AvailabilityEnum,
        description: 'online, away or offline: routing hands conversations to online users only.',
      }),
      capacity: t.arg.int({ description: 'Open conversations routing may assign at once (0 to 10,000); null: no limit.' }),
    },
    resolve: (query, _, { id, ...input }, ctx) => accounts.updateUser(ctx, id, input, query),
  }),
);

builder.mutationField('setMyAvailability', (t) =>
  t.field({
    type: ViewerUser,
    description:
      'Sets the calling key’s user’s availability (any key): routing hands conversations to `online` users only, and coming online hands them the oldest waiting conversations they can take.',
    args: { availability: t.arg({ type: AvailabilityEnum, required: true }) },
    resolve: (_, args, ctx) => accounts.setMyAvailability(ctx, args),
  }),
);

builder.mutationField('deleteUser', (t) =>
  t.boolean({
    description:
      'Deletes a user and revokes its API keys; its deals keep it as owner (Owner/Admin with a full key). Only an owner deletes an owner; the last owner cannot be deleted (409).',
    args: idArg('The user.'),
    resolve: (_, args, ctx) => accounts.deleteUser(ctx, args.id),
  }),
);

builder.queryField('apiKeys', (t) =>
  t.prismaField({
    type: [ApiKey],
    extensions: listCount('api_keys'),
    description: 'API keys of the organisation, without secrets (Owner/Admin).',
    resolve: (query, _, __, ctx) => accounts.listApiKeys(ctx, query),
  }),
);

builder.mutationField('createApiKey', (t) =>
  t.field({
    type: CreatedApiKey,
    description: 'Creates an API key (Owner/Admin). The key is in the answer, once.',
    args: {
      name: t.arg.string({ required: true }),
      user_id: t.arg({ type: 'UUID', description: 'Defaults to the caller’s user.' }),
      permissions: t.arg.stringList({ description: 'Narrow the user’s role to these permissions.' }),
      expires_at: t.arg({ type: 'DateTime' }),
    },
    resolve: (_, args, ctx) => accounts.createApiKey(ctx, args),
  }),
);

builder.mutationField('revokeApiKey', (t) =>
  t.prismaField({
    type: ApiKey,
    description: 'Revokes a key: its next request gets 401.',
    args: idArg('The API key.'),
    resolve: (query, _, args, ctx) => accounts.revokeApiKey(ctx, args.id, query),
  }),
);

builder.mutationField('deleteApiKey', (t) =>
  t.boolean({
    description: 'Deletes a key: its next request gets 401.',
    args: idArg('The API key.'),
    resolve: (_, args, ctx) => accounts.deleteApiKey(ctx, args.id),
  }),
);
