// Roles and permissions (decisions.md "Roles and permissions"). Permissions are defined by the domains
// (their manifests' `permissions`), registered once from the list of domains; a key's own permission
// list, when set, narrows its user's role to that subset; it never widens it.
import { invalidInput } from '../errors.js';

export type RoleName = 'owner' | 'admin' | 'operator';
export const ROLES: readonly RoleName[] = ['owner', 'admin', 'operator'];

/** A permission name such as `pipeline.view`; the catalogue says which exist. */
export type Permission = string;

const byRole = new Map<RoleName, Set<Permission>>(ROLES.map((r) => [r, new Set()]));
const known = new Set<Permission>();

/** Called once with every domain's permissions (domains/index.ts). */
export function registerPermissions(specs: readonly { name: string; roles: readonly RoleName[] }[]) {
  for (const spec of specs) {
    if (known.has(spec.name)) throw new Error(`Permission ${spec.name} is defined twice`);
    known.add(spec.name);
    for (const role of spec.roles) byRole.get(role)!.add(spec.name);
  }
}

/** The catalogue, once the domains have registered it: an entry point that forgot is a programming error. */
function catalogue(): ReadonlySet<Permission> {
  if (!known.size) throw new Error('No permissions registered: import src/domains/index.js in this entry point');
  return known;
}

export function isPermission(value: string): boolean {
  return catalogue().has(value);
}

export function allPermissions(): Permission[] {
  return [...catalogue()];
}

export function rolePermissions(role: RoleName): ReadonlySet<Permission> {
  catalogue();
  return byRole.get(role) ?? new Set();
}

/** A new key's list: known names within what `role` grants (400 otherwise); [] makes a full key. */
export function keyPermissions(role: RoleName, requested: readonly string[]): Permission[] {
  const unknown = requested.filter((p) => !isPermission(p));
  if (unknown.length) throw invalidInput(`Permissões desconhecidas: ${unknown.join(', ')}`);
  const outside = requested.filter((p) => !rolePermissions(role).has(p));
  if (outside.length) throw invalidInput(`Permissões fora do papel ${role} do usuário: ${outside.join(', ')}`);
  return [...requested];
}

export function effectivePermissions(role: RoleName, keyPermissions: readonly string[]): Set<Permission> {
  const fromRole = rolePermissions(role);
  if (keyPermissions.length === 0) return new Set(fromRole);
  return new Set([...fromRole].filter((p) => keyPermissions.includes(p)));
}
