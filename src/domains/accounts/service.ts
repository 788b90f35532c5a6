// Organisations, users and API keys. Organisations are created by the platform operator (ADMIN_TOKEN,
// the CLI, or the first start); users and keys by an organisation's Owner/Admin.
import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import { displayPrefix, generateApiKey, hashApiKey } from '../../auth/keys.js';
import { keyPermissions } from '../../auth/permissions.js';
import { requireAccountManager, requireAdminRole, requirePlatformAdmin } from '../../auth/viewer.js';
import { MIGRATION_LOCK_KEY } from '../../db/migrate.js';
import { fromDatabaseError, notFound, invalidField } from '../../errors.js';
import type { Context } from '../../context/context.js';
import { optionalEmail, requiredText } from '../common/validate.js';
import type { Selection } from '../common/types.js';

export type RoleInput = 'owner' | 'admin' | 'operator';

export interface NewOrganisation {
  name: string;
  owner_name?: string | null;
  owner_email?: string | null;
  /** Use this exact key (BOOTSTRAP_API_KEY) instead of generating one. */
  key?: string;
}

/** Creates an organisation with its Owner and the Owner's first API key, in one transaction. */
export function createOrganisation(prisma: PrismaClient, input: NewOrganisation) {
  return prisma.$transaction((tx) => insertOrganisation(tx, input));
}

async function insertOrganisation(tx: Prisma.TransactionClient, input: NewOrganisation) {
  const name = requiredText('name', input.name, 200);
  const ownerName = input.owner_name?.trim() || 'Owner';
  const ownerEmail = optionalEmail(input.owner_email) ?? 'owner@localhost';
  const key = input.key ?? generateApiKey();
  const tenant = await tx.tenant.create({ data: { name } });
  const user = await tx.user.create({ data: { tenant_id: tenant.id, name: ownerName, email: ownerEmail, role: 'owner' } });
  await tx.apiKey.create({
    data: { tenant_id: tenant.id, user_id: user.id, name: 'Owner key', prefix: displayPrefix(key), key_hash: hashApiKey(key), permissions: [] },
  });
  return { tenant, user, api_key: key };
}

export function createTenantAsAdmin(ctx: Context, input: NewOrganisation) {
  requirePlatformAdmin(ctx.viewer);
  return createOrganisation(ctx.prisma, { name: input.name, owner_name: input.owner_name, owner_email: input.owner_email });
}

export function listUsers(ctx: Context, query: Selection = {}) {
  requireAdminRole(ctx.viewer);
  return ctx.db.user.findMany({ ...query, orderBy: { created_at: 'asc' } });
}

const ROLES: RoleInput[] = ['owner', 'admin', 'operator'];

export async function createUser(ctx: Context, input: { name: string; email: string; role: string }) {
  requireAccountManager(ctx.viewer);
  const name = requiredText('name', input.name, 200);
  const email = optionalEmail(requiredText('email', input.email, 254));
  if (!ROLES.includes(input.role as RoleInput)) throw invalidField('role', 'deve ser owner, admin ou operator');
  requireAccountManager(ctx.viewer, input.role as RoleInput);
  try {
    return await ctx.db.user.create({ data: { name, email: email!.toLowerCase(), role: input.role as RoleInput } });
  } catch (e) {
    throw fromDatabaseError(e, 'Usuário com este e-mail');
  }
}

export function listApiKeys(ctx: Context, query: Selection = {}) {
  requireAdminRole(ctx.viewer);
  return ctx.db.apiKey.findMany({ ...query, orderBy: { created_at: 'asc' } });
}

export async function createApiKey(
  ctx: Context,
  input: { name: string; user_id?: string | null; permissions?: string[] | null; expires_at?: Date | null },
) {
  const viewer = requireAccountManager(ctx.viewer);
  const name = requiredText('name', input.name, 200);
  if (input.expires_at && input.expires_at.getTime() <= Date.now()) throw invalidField('expires_at', 'deve estar no futuro');
  const userId = input.user_id ?? (viewer.kind === 'user' ? viewer.userId : null);
  if (!userId) throw invalidField('user_id', 'é obrigatório');
  const user = await ctx.db.user.findUnique({ where: { id: userId }, select: { id: true, role: true } });
  if (!user) throw notFound('Usuário');
  requireAccountManager(ctx.viewer, user.role);
  const permissions = keyPermissions(user.role, input.permissions ?? []);
  const key = generateApiKey();
  const row = await ctx.db.apiKey.create({
    data: { user_id: user.id, name, prefix: displayPrefix(key), key_hash: hashApiKey(key), permissions, expires_at: input.expires_at ?? null },
  });
  return { ...row, key };
}

export async function revokeApiKey(ctx: Context, id: string, query: Selection = {}) {
  requireAccountManager(ctx.viewer);
  // Revoking twice keeps the first revocation time.
  await ctx.db.apiKey.updateMany({ where: { id, revoked_at: null }, data: { revoked_at: new Date() } });
  const key = await ctx.db.apiKey.findUnique({ ...query, where: { id } });
  if (!key) throw notFound('Chave de API');
  return key;
}

export async function deleteApiKey(ctx: Context, id: string) {
  requireAccountManager(ctx.viewer);
  const { count } = await ctx.db.apiKey.deleteMany({ where: { id } });
  if (count === 0) throw notFound('Chave de API');
  return true;
}

/**
 * First start: make sure someone can get in (decisions.md BOOTSTRAP_API_KEY). Several processes may
 * start together on an empty database: the decision and the creation hold the migrations' advisory
 * lock, so exactly one of them creates the organisation and the others find it.
 */
export async function bootstrapOrganisation(prisma: PrismaClient, bootstrapKey?: string) {
  if ((await prisma.tenant.count()) > 0) return null; // every start but the first: no lock taken
  const created = await prisma.$transaction(
    async (tx) => {
      // First statement, so the transaction holds nothing a migration of another process could wait on.
      await tx.$queryRaw`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY}::bigint)::text AS locked`;
      if ((await tx.tenant.count()) > 0) return null;
      return insertOrganisation(tx, { name: 'Default', key: bootstrapKey });
    },
    // The lock may be waited for while another process migrates or bootstraps.
    { maxWait: 10_000, timeout: 60_000 },
  );
  return created && { ...created, generated: !bootstrapKey };
}

