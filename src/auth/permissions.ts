// Roles and permissions (decisions.md "Roles and permissions"). A key's own permission list, when set,
// narrows its user's role to that subset; it never widens it.
import { invalidInput } from '../errors.js';

export const PERMISSIONS = [
  'pipeline.view',
  'pipeline.manage',
  'pipeline.products.manage',
  'pipeline.deals.create',
  'pipeline.deals.edit',
  'pipeline.deals.delete',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

export type RoleName = 'owner' | 'admin' | 'operator';

export const ROLE_PERMISSIONS: Record<RoleName, readonly Permission[]> = {
  owner: PERMISSIONS,
  admin: PERMISSIONS,
  operator: ['pipeline.view', 'pipeline.deals.create', 'pipeline.deals.edit'],
};

export function isPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value);
}

/** A new key's list: known names within what `role` grants (400 otherwise); [] makes a full key. */
export function keyPermissions(role: RoleName, requested: readonly string[]): Permission[] {
  const unknown = requested.filter((p) => !isPermission(p));
  if (unknown.length) throw invalidInput(`Permissões desconhecidas: ${unknown.join(', ')}`);
  const outside = requested.filter((p) => !ROLE_PERMISSIONS[role].includes(p as Permission));
  if (outside.length) throw invalidInput(`Permissões fora do papel ${role} do usuário: ${outside.join(', ')}`);
  return requested as Permission[];
}

export function effectivePermissions(role: RoleName, keyPermissions: readonly string[]): Set<Permission> {
  const fromRole = ROLE_PERMISSIONS[role];
  if (keyPermissions.length === 0) return new Set(fromRole);
  return new Set(fromRole.filter((p) => keyPermissions.includes(p)));
}
