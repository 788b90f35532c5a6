// Tenant scoping in one place: a Prisma client extension that adds `tenant_id` to the filter of every
// read, update and delete, and to the data of every create, on every tenant-owned model. Resolvers and
// services use the request's scoped client (ctx.db) and never write tenant_id conditions themselves.
// Relations are safe too: composite (tenant_id, id) foreign keys keep related rows in the same tenant.
import type { PrismaClient } from '../generated/prisma/client.js';

const FILTERED = new Set([
  'findUnique', 'findUniqueOrThrow', 'findFirst', 'findFirstOrThrow', 'findMany', 'count', 'aggregate',
  'groupBy', 'update', 'updateMany', 'updateManyAndReturn', 'delete', 'deleteMany',
]);
const CREATING = new Set(['create', 'createMany', 'createManyAndReturn']);
/** Models that are not tenant-owned. */
const GLOBAL_MODELS = new Set(['Tenant']);

function scopeArgs(operation: string, args: Record<string, any>, tenant_id: string) {
  if (FILTERED.has(operation)) return { ...args, where: { ...args.where, tenant_id } };
  if (CREATING.has(operation)) {
    const data = Array.isArray(args.data) ? args.data.map((d: object) => ({ ...d, tenant_id })) : { ...args.data, tenant_id };
    return { ...args, data };
  }
  if (operation === 'upsert') return { ...args, where: { ...args.where, tenant_id }, create: { ...args.create, tenant_id } };
  throw new Error(`Operation ${operation} is not tenant-scoped; use the scoped client's supported operations`);
}

function scopeToTenant(prisma: PrismaClient, tenantId: string) {
  return prisma.$extends({
    name: 'tenant-scope',
    query: {
      $allModels: {
        $allOperations({ model, operation, args, query }) {
          if (GLOBAL_MODELS.has(model)) return query(args);
          return query(scopeArgs(operation, (args ?? {}) as Record<string, any>, tenantId));
        },
      },
    },
  }) as unknown as TenantDb;
}

/** A tenant-scoped client has the PrismaClient API; typed as such so services read naturally. */
export type TenantDb = PrismaClient;

/** Scoped clients are cheap but not free to build; reuse one per tenant (bounded). */
export class TenantClients {
  private cache = new Map<string, TenantDb>();
  constructor(private prisma: PrismaClient, private max = 500) {}
  for(tenantId: string): TenantDb {
    let db = this.cache.get(tenantId);
    if (!db) {
      db = scopeToTenant(this.prisma, tenantId);
      if (this.cache.size >= this.max) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(tenantId, db);
    }
    return db;
  }
}
