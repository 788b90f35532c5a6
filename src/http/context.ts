// The per-request GraphQL context, the same for /graphql and /backend: who is calling, the tenant-scoped
// database client, per-request dataloaders, and any files a multipart REST request carried.
import type { Viewer } from '../auth/viewer.js';
import type { Config } from '../config.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { TenantClients, TenantDb } from '../db/tenant-scope.js';
import { AppError } from '../errors.js';

export interface Context {
  viewer: Viewer | null;
  /** The caller's organisation's data. Touching it without an organisation viewer is a 403. */
  db: TenantDb;
  /** Unscoped client: only for platform-level work (organisations, authentication). */
  prisma: PrismaClient;
  config: Config;
  requestId: string;
  /** Files of a multipart REST request, by form field name. */
  files: Map<string, File>;
  /** Per-request dataloader instances (see http/loaders.ts). */
  loaders: Map<unknown, unknown>;
}

export interface ContextDeps {
  prisma: PrismaClient;
  tenants: TenantClients;
  config: Config;
}

const noTenant = new Proxy({} as TenantDb, {
  get() {
    throw new AppError('FORBIDDEN', 'Esta operação exige uma chave de API de uma organização');
  },
});

export function createContext(
  deps: ContextDeps,
  request: { viewer: Viewer | null; requestId: string; files?: Map<string, File> },
): Context {
  const viewer = request.viewer;
  return {
    viewer,
    db: viewer?.kind === 'user' ? deps.tenants.for(viewer.tenantId) : noTenant,
    prisma: deps.prisma,
    config: deps.config,
    requestId: request.requestId,
    files: request.files ?? new Map(),
    loaders: new Map(),
  };
}
