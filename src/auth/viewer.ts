// Who is calling: a user of one organisation (through an API key), or the platform operator
// (ADMIN_TOKEN). Checks live here so every resolver asks the same question the same way.
import { AppError } from '../errors.js';
import type { Permission, RoleName } from './permissions.js';

export interface TenantViewer {
  kind: 'user';
  tenantId: string;
  userId: string;
  role: RoleName;
  apiKeyId: string;
  permissions: ReadonlySet<Permission>;
  /** The key carries its own permission list (even one naming every permission of the role). */
  narrowed: boolean;
}

export interface AdminViewer {
  kind: 'admin';
  /** Set when the operator acts inside one organisation (the CLI managing its users and keys). */
  tenantId?: string;
}

export type Viewer = TenantViewer | AdminViewer;

export function requireTenant(viewer: Viewer | null): TenantViewer {
  if (!viewer) throw new AppError('UNAUTHORIZED', 'Chave de API ausente ou inválida');
  if (viewer.kind !== 'user') throw new AppError('FORBIDDEN', 'Esta operação exige uma chave de API de uma organização');
  return viewer;
}

export function requirePermission(viewer: Viewer | null, permission: Permission): TenantViewer {
  const user = requireTenant(viewer);
  if (!user.permissions.has(permission)) throw new AppError('FORBIDDEN', `Permissão necessária: ${permission}`);
  return user;
}

/** Owner/Admin-only areas: users, API keys, webhooks, departments listing, knowledge and template writes… */
export function requireAdminRole(viewer: Viewer | null): TenantViewer {
  const user = requireTenant(viewer);
  if (user.role !== 'owner' && user.role !== 'admin') throw new AppError('FORBIDDEN', 'Requer papel de administrador ou proprietário');
  return user;
}

/**
 * Managing users and API keys (decisions.md "Who may manage users and keys"): an owner or admin with a
 * full key, or the platform operator acting inside the organisation (the CLI). `forRole` is the role of
 * the user being created or given a key: only an owner (or the operator) may act for an owner.
 */
export function requireAccountManager(viewer: Viewer | null, forRole?: RoleName): Viewer {
  if (viewer?.kind === 'admin' && viewer.tenantId) return viewer;
  const user = requireAdminRole(viewer);
  if (user.narrowed) throw new AppError('FORBIDDEN', 'Gerenciar usuários e chaves exige uma chave sem lista de permissões');
  if (forRole === 'owner' && user.role !== 'owner') throw new AppError('FORBIDDEN', 'Somente um proprietário pode criar proprietários ou chaves para eles');
  return user;
}

export function requirePlatformAdmin(viewer: Viewer | null): AdminViewer {
  if (!viewer || viewer.kind !== 'admin') throw new AppError('NOT_FOUND', 'Rota não encontrada');
  return viewer;
}
