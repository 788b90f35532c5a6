// The per-request GraphQL context, the same for /graphql and /backend: who is calling, the tenant-scoped
// database client and per-request state. Transport-neutral: GraphQL, REST, handler routes and background
// work build the same context.
import type { Viewer } from '../auth/viewer.js';
import type { Config } from '../config.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { TenantClients, TenantDb } from '../db/tenant-scope.js';
import type { DirectSql } from '../db/direct.js';
import { AppError } from '../errors.js';
import type { FileStorage } from '../storage/storage.js';

export interface Context {
  viewer: Viewer | null;
  /** The caller's organisation's data. Touching it without an organisation viewer is a 403. */
  db: TenantDb;
  /** Unscoped client: only for platform-level work (organisations, authentication). */
  prisma: PrismaClient;
  config: Config;
  /** Stored files (uploads, media, knowledge files): one store per app, from STORAGE_DIR. */
  storage: FileStorage;
  requestId: string;
  /** Per-request state: dataloaders and what they settled (see context/loaders.ts). */
  perRequest: Map<object, unknown>;
  /** Aborted when the client goes away: long work (a file's extraction) stops for it. */
  signal?: AbortSignal;
  /** PostgreSQL: the `pg` path for statements every request of a route runs (the media proxy's lookup); see db/direct.ts. */
  direct?: DirectSql;
}

export interface ContextDeps {
  prisma: PrismaClient;
  /** PostgreSQL: the `pg` path for the hottest statements (the key lookup); see db/direct.ts. */
  direct?: DirectSql;
  tenants: TenantClients;
  config: Config;
  storage: FileStorage;
}

const noTenant = new Proxy({} as TenantDb, {
  get() {
    throw new AppError('FORBIDDEN', 'Esta operação exige uma chave de API de uma organização');
  },
});

export function createContext(deps: ContextDeps, request: { viewer: Viewer | null; requestId: string; signal?: AbortSignal }): Context {
  const viewer = request.viewer;
  return {
    viewer,
    // Under the caller's row policies (db/row-policy.ts): an operator sees only the conversations it may.
    db: viewer?.kind === 'user' ? deps.tenants.forViewer(viewer) : noTenant,
    prisma: deps.prisma,
    config: deps.config,
    storage: deps.storage,
    requestId: request.requestId,
    perRequest: new Map(),
    signal: request.signal,
    direct: deps.direct,
  };
}
