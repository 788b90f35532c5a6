// The scoped client of an organisation for work that has no caller: background jobs (the job names its
// tenant) and the provider's webhook (the channel names it). The same scoping as ctx.db.
import { TenantClients, type TenantDb } from '../../db/tenant-scope.js';
import type { PrismaClient } from '../../generated/prisma/client.js';

const clients = new WeakMap<PrismaClient, TenantClients>();

export function tenantDb(prisma: PrismaClient, tenantId: string): TenantDb {
  let forPrisma = clients.get(prisma);
  if (!forPrisma) clients.set(prisma, (forPrisma = new TenantClients(prisma)));
  return forPrisma.for(tenantId);
}
