// The tenant condition of raw SQL, in one place (test/platform/tenant-sql.test.ts holds every other
// statement in src to it). It sits on the lowest floor, beside errors.ts, because every floor that
// writes SQL for a tenant needs it: auth (the key lookup), http (idempotency, the cost estimate), db
// (the scoped client's raw statements) and the domains.
import { Prisma } from './generated/prisma/client.js';

const ALIAS = /^[a-z_][a-z0-9_]*$/;

/**
 * The tenant condition of a raw statement. `tenant` is the bound uuid a
 * `$tenantQuery` statement is given, or a tenant id (outside the scoped client): `tenantIs(tenant, 'd')`
 * is `d.tenant_id = $n::uuid`, `tenantIs(tenant)` is `tenant_id = $n::uuid` (a table without alias).
 * Joins between two aliases (`t.tenant_id = d.tenant_id`) are written as they are.
 */
export function tenantIs(tenant: string | Prisma.Sql, alias?: string): Prisma.Sql {
  const value = typeof tenant === 'string' ? Prisma.sql`${tenant}::uuid` : tenant;
  if (alias === undefined) return Prisma.sql`tenant_id = ${value}`;
  if (!ALIAS.test(alias)) throw new Error(`tenantIs: not a table alias: ${alias}`);
  return Prisma.sql`${Prisma.raw(alias)}.tenant_id = ${value}`;
}
