// Who is calling: a user of one organisation (through an API key), or the platform operator
// (ADMIN_TOKEN). The checks auth/access.ts applies to every root field and route, and the ones account
// services apply to the user they act on, live here.
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

/**
 * Managing users and API keys (decisions.md "Who may manage users and keys"): an owner or admin with a
 * full key, or the platform operator acting inside the organisation (the CLI). `forRole` is the role of
 * the user acted on (created, changed, deleted, given or losing a key) or given: only an owner (or the
 * operator) may act for an owner.
 */
export function requireAccountManager(viewer: Viewer | null, forRole?: RoleName): Viewer {
  if (viewer?.kind === 'admin' && viewer.tenantId) return viewer;
  const user = requireTenant(viewer);
  if (user.role !== 'owner' && user.role !== 'admin') throw new AppError('FORBIDDEN', 'Requer papel de administrador ou proprietário');
  if (user.narrowed) throw new AppError('FORBIDDEN', 'Gerenciar usuários e chaves exige uma chave sem lista de permissões');
  if (forRole === 'owner' && user.role !== 'owner')
    throw new AppError('FORBIDDEN', 'Somente um proprietário pode criar, alterar ou remover proprietários e suas chaves');
  return user;
}

export function requirePlatformAdmin(viewer: Viewer | null): AdminViewer {
  if (!viewer || viewer.kind !== 'admin') throw new AppError('NOT_FOUND', 'Rota não encontrada');
  return viewer;
}
