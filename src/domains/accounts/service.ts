// Organisations, users and API keys. Organisations are created by the platform operator (ADMIN_TOKEN,
// the CLI, or the first start); users and keys by an organisation's Owner/Admin.
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { displayPrefix, generateApiKey, hashApiKey } from '../../auth/keys.js';
import { keyPermissions } from '../../auth/permissions.js';
import { requireAccountManager, requirePlatformAdmin, requireTenant, type Viewer } from '../../auth/viewer.js';
import { MIGRATION_LOCK_KEY } from '../../db/migrate.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { tenantIs } from '../../tenant-sql.js';
import { conflict, fromDatabaseError, notFound, invalidField } from '../../errors.js';
import { LOCKING_TX } from '../common/lock.js';
import type { Context } from '../../context/context.js';
import { optionalEmail, requiredText } from '../common/validate.js';
import type { Selection } from '../common/types.js';
import { queueRouting } from '../messaging/routing-queue.js';

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
    data: {
      tenant_id: tenant.id,
      user_id: user.id,
      name: 'Owner key',
      prefix: displayPrefix(key),
      key_hash: hashApiKey(key),
      permissions: [],
    },
  });
  return { tenant, user, api_key: key };
}

export function createTenantAsAdmin(ctx: Context, input: NewOrganisation) {
  requirePlatformAdmin(ctx.viewer);
  return createOrganisation(ctx.prisma, { name: input.name, owner_name: input.owner_name, owner_email: input.owner_email });
}

/** A deleted user's row stays (deals and history name it): every lookup of people skips it. */
const LIVE = { deleted_at: null } as const;

export function listUsers(ctx: Context, query: Selection = {}) {
  return ctx.db.user.findMany({ ...query, where: LIVE, orderBy: { created_at: 'asc' } });
}

const ROLES: RoleInput[] = ['owner', 'admin', 'operator'];

function roleOf(value: string): RoleInput {
  if (!ROLES.includes(value as RoleInput)) throw invalidField('role', 'deve ser owner, admin ou operator');
  return value as RoleInput;
}

const emailOf = (value: string) => optionalEmail(requiredText('email', value, 254))!.toLowerCase();

export async function createUser(ctx: Context, input: { name: string; email: string; role: string }) {
  requireAccountManager(ctx.viewer);
  const name = requiredText('name', input.name, 200);
  const email = emailOf(input.email);
  const role = roleOf(input.role);
  requireAccountManager(ctx.viewer, role);
  try {
    return await ctx.db.user.create({ data: { name, email, role } });
  } catch (e) {
    throw fromDatabaseError(e, 'Usuário com este e-mail');
  }
}

/**
 * Locks the organisation's owners until the transaction ends and returns their ids, so that two
 * demotions or deletions at once cannot both see another owner left: the second waits, then sees one.
 */
async function lockOwners(tx: TenantTx): Promise<string[]> {
  const rows = await tx.$tenantQuery<{ id: string }[]>(
    (tenant) =>
      Prisma.sql`SELECT id::text AS id FROM users WHERE ${tenantIs(tenant)} AND role = 'owner' AND deleted_at IS NULL ORDER BY id FOR UPDATE`,
  );
  return rows.map((r) => r.id);
}

/** The user `id` (404 for unknown, deleted or another organisation's), once the caller may act on it. */
async function managedUser(tx: TenantTx, viewer: Viewer, id: string) {
  const user = await tx.user.findFirst({ where: { id, ...LIVE } });
  if (!user) throw notFound('Usuário');
  // Only an owner changes, deletes or touches the keys of an owner.
  requireAccountManager(viewer, user.role);
  return user;
}

const lastOwner = () => conflict('A organização precisa de ao menos um proprietário');

export async function updateUser(
  ctx: Context,
  id: string,
  input: { name?: string | null; email?: string | null; role?: string | null; availability?: string | null; capacity?: number | null },
  query: Selection = {},
) {
  const viewer = requireAccountManager(ctx.viewer);
  const name = input.name == null ? undefined : requiredText('name', input.name, 200);
  const email = input.email == null ? undefined : emailOf(input.email);
  const role = input.role == null ? undefined : roleOf(input.role);
  const availability = availabilityOf(input.availability);
  if (input.capacity != null && (!Number.isInteger(input.capacity) || input.capacity < 0 || input.capacity > MAX_CAPACITY))
    throw invalidField('capacity', `deve ser um inteiro de 0 a ${MAX_CAPACITY}, ou null (sem limite)`);
  if (role) requireAccountManager(viewer, role); // only an owner makes an owner
  try {
    return await ctx.db.$transaction(async (tx) => {
      const owners = await lockOwners(tx);
      const user = await managedUser(tx, viewer, id);
      if (user.role === 'owner' && role && role !== 'owner' && owners.length <= 1) throw lastOwner();
      const updated = await tx.user.update({
        ...query,
        where: { id },
        data: { name, email, role, availability, capacity: input.capacity },
      });
      if (availability === 'online' || input.capacity !== undefined) await queueRouting(tx, { userId: id });
      return updated;
    }, LOCKING_TX);
  } catch (e) {
    throw fromDatabaseError(e, 'Usuário com este e-mail');
  }
}

/** A user's capacity is at most this (a bound, not a target). */
export const MAX_CAPACITY = 10_000;

const AVAILABILITIES = ['online', 'away', 'offline'] as const;

function availabilityOf(value: string | null | undefined): (typeof AVAILABILITIES)[number] | undefined {
  if (value === undefined) return undefined;
  if (value === null || !(AVAILABILITIES as readonly string[]).includes(value))
    throw invalidField('availability', 'deve ser online, away ou offline');
  return value as (typeof AVAILABILITIES)[number];
}

/**
 * PUT /backend/me/availability: the key's user says whether routing may hand them conversations; coming
 * online calls a routing pass of their departments (the oldest waiting conversations they can take).
 */
export async function setMyAvailability(ctx: Context, input: { availability: string }) {
  const viewer = requireTenant(ctx.viewer);
  const availability = availabilityOf(input.availability)!;
  return ctx.db.$transaction(async (tx) => {
    const user = await tx.user.update({
      where: { id: viewer.userId },
      data: { availability },
      select: { id: true, name: true, email: true, role: true, availability: true, capacity: true },
    });
    if (availability === 'online') await queueRouting(tx, { userId: viewer.userId });
    return user;
  });
}

/**
 * Deletes a user: its keys are revoked and it leaves its departments; the row stays for the deals and
 * history that name it, with its e-mail freed for a new user.
 */
export async function deleteUser(ctx: Context, id: string) {
  const viewer = requireAccountManager(ctx.viewer);
  await ctx.db.$transaction(async (tx) => {
    const owners = await lockOwners(tx);
    const user = await managedUser(tx, viewer, id);
    if (user.role === 'owner' && owners.length <= 1) throw lastOwner();
    const now = new Date();
    await tx.apiKey.updateMany({ where: { user_id: id, revoked_at: null }, data: { revoked_at: now } });
    await tx.departmentMember.deleteMany({ where: { user_id: id } });
    await tx.user.update({ where: { id }, data: { deleted_at: now, email: `deleted-${id}@users.invalid` } });
  }, LOCKING_TX);
  return true;
}

/** `GET /me`, `viewer`: the key's user, organisation and the key, with what the key may do. */
export async function whoAmI(ctx: Context) {
  const viewer = requireTenant(ctx.viewer);
  const [user, tenant, key] = await Promise.all([
    ctx.db.user.findUniqueOrThrow({
      where: { id: viewer.userId },
      select: { id: true, name: true, email: true, role: true, availability: true, capacity: true },
    }),
    ctx.prisma.tenant.findUniqueOrThrow({ where: { id: viewer.tenantId }, select: { id: true, name: true } }),
    ctx.db.apiKey.findUniqueOrThrow({ where: { id: viewer.apiKeyId }, select: { id: true, name: true, prefix: true, expires_at: true } }),
  ]);
  return { user, tenant, api_key: { ...key, permissions: [...viewer.permissions].sort() } };
}

export function listApiKeys(ctx: Context, query: Selection = {}) {
  return ctx.db.apiKey.findMany({ ...query, orderBy: { created_at: 'asc' } });
}

/** The key `id` (404 otherwise), once the caller may act on its user's keys. */
async function managedKey(ctx: Context, id: string) {
  const viewer = requireAccountManager(ctx.viewer);
  const key = await ctx.db.apiKey.findUnique({ where: { id }, select: { id: true, user: { select: { role: true } } } });
  if (!key) throw notFound('Chave de API');
  requireAccountManager(viewer, key.user.role);
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
  const user = await ctx.db.user.findFirst({ where: { id: userId, ...LIVE }, select: { id: true, role: true } });
  if (!user) throw notFound('Usuário');
  requireAccountManager(ctx.viewer, user.role);
  const permissions = keyPermissions(user.role, input.permissions ?? []);
  const key = generateApiKey();
  const row = await ctx.db.apiKey.create({
    data: {
      user_id: user.id,
      name,
      prefix: displayPrefix(key),
      key_hash: hashApiKey(key),
      permissions,
      expires_at: input.expires_at ?? null,
    },
  });
  return { ...row, key };
}

export async function revokeApiKey(ctx: Context, id: string, query: Selection = {}) {
  await managedKey(ctx, id);
  // Revoking twice keeps the first revocation time.
  await ctx.db.apiKey.updateMany({ where: { id, revoked_at: null }, data: { revoked_at: new Date() } });
  const key = await ctx.db.apiKey.findUnique({ ...query, where: { id } });
  if (!key) throw notFound('Chave de API');
  return key;
}

export async function deleteApiKey(ctx: Context, id: string) {
  await managedKey(ctx, id);
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
