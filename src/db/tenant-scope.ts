// Tenant scoping in one place: a Prisma client extension that adds `tenant_id` to the filter of every
// read, update and delete, and to the data of every create, on every tenant-owned model. Resolvers and
// services use the request's scoped client (ctx.db) and never write tenant_id themselves: its type
// says so (create data without tenant_id, no raw SQL but through `$tenantQuery`, which binds the
// tenant). Relations are safe too: composite (tenant_id, id) foreign keys keep related rows in the
// same tenant.
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { withCommitHooks } from './after-commit.js';
import type { DirectSql } from './direct.js';

const FILTERED = new Set([
  'findUnique', 'findUniqueOrThrow', 'findFirst', 'findFirstOrThrow', 'findMany', 'count', 'aggregate',
  'groupBy', 'update', 'updateMany', 'updateManyAndReturn', 'delete', 'deleteMany',
]);
const CREATING = new Set(['create', 'createMany', 'createManyAndReturn']);
/** Models that are not tenant-owned (the job queue serves every organisation). */
const GLOBAL_MODELS = new Set(['Tenant', 'Job']);

function scopeArgs(operation: string, args: Record<string, any>, tenant_id: string) {
  if (FILTERED.has(operation)) return { ...args, where: { ...args.where, tenant_id } };
  if (CREATING.has(operation)) {
    const data = Array.isArray(args.data) ? args.data.map((d: object) => ({ ...d, tenant_id })) : { ...args.data, tenant_id };
    return { ...args, data };
  }
  if (operation === 'upsert') return { ...args, where: { ...args.where, tenant_id }, create: { ...args.create, tenant_id } };
  throw new Error(`Operation ${operation} is not tenant-scoped; use the scoped client's supported operations`);
}

/** Raised when a raw statement built for a tenant does not use the tenant it was given. */
class UnscopedSqlError extends Error {}

function scopeToTenant(prisma: PrismaClient, tenantId: string, direct?: DirectSql) {
  const tenant = Prisma.sql`${tenantId}::uuid`;
  const bound = (build: (tenant: Prisma.Sql) => Prisma.Sql) => {
    const sql = build(tenant);
    if (!sql.values.includes(tenantId)) throw new UnscopedSqlError('Raw statement without the tenant condition');
    return sql;
  };
  type RawClient = { $queryRaw<R>(query: Prisma.Sql): Promise<R>; $transaction?: unknown };
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
    client: {
      $tenantId: tenantId,
      /**
       * A raw statement for this tenant: `build` gets the tenant id as a bound `uuid` fragment and must
       * use it (a statement that does not bind the tenant is refused before it runs).
       */
      $tenantQuery<T = unknown>(this: object, build: (tenant: Prisma.Sql) => Prisma.Sql): Promise<T> {
        return (Prisma.getExtensionContext(this) as unknown as RawClient).$queryRaw<T>(bound(build));
      },
      /**
       * `$tenantQuery` on the fastest driver path: the `pg` pool directly on PostgreSQL, with rows as `pg`
       * parses them (see DirectSql), so a statement meant for both paths casts its columns to types both
       * read alike (text, int, bool). Prisma's path on PGlite, and inside a transaction (which the pool
       * would escape).
       */
      $tenantQueryDirect<T = unknown>(this: object, build: (tenant: Prisma.Sql) => Prisma.Sql): Promise<T[]> {
        const sql = bound(build);
        const client = Prisma.getExtensionContext(this) as unknown as RawClient;
        // A transaction's client has no $transaction of its own.
        if (!direct || typeof client.$transaction !== 'function') return client.$queryRaw<T[]>(sql);
        return direct.query<T>(sql.text, sql.values);
      },
    },
  });
}

// ---- Types: what the scoped client accepts, stated truthfully ----

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** Create data of a tenant-owned model without tenant_id (or the tenant relation): the scope fills it in. */
type WithoutTenant<D> = D extends readonly (infer I)[] ? DistributiveOmit<I, 'tenant_id' | 'tenant'>[] : DistributiveOmit<D, 'tenant_id' | 'tenant'>;
type ScopedData<A> = Omit<A, 'data'> & { data: WithoutTenant<A extends { data: infer D } ? D : never> };
type ScopedUpsert<A> = Omit<A, 'create'> & { create: WithoutTenant<A extends { create: infer D } ? D : never> };

type ScopedDelegate<D> = Omit<D, 'create' | 'createMany' | 'createManyAndReturn' | 'upsert'> & {
  create<A extends ScopedData<Prisma.Args<D, 'create'>>>(args: Prisma.Exact<A, ScopedData<Prisma.Args<D, 'create'>>>): Prisma.PrismaPromise<Prisma.Result<D, A, 'create'>>;
  createMany<A extends ScopedData<Prisma.Args<D, 'createMany'>>>(args: Prisma.Exact<A, ScopedData<Prisma.Args<D, 'createMany'>>>): Prisma.PrismaPromise<Prisma.BatchPayload>;
  createManyAndReturn<A extends ScopedData<Prisma.Args<D, 'createManyAndReturn'>>>(
    args: Prisma.Exact<A, ScopedData<Prisma.Args<D, 'createManyAndReturn'>>>,
  ): Prisma.PrismaPromise<Prisma.Result<D, A, 'createManyAndReturn'>>;
  upsert<A extends ScopedUpsert<Prisma.Args<D, 'upsert'>>>(args: Prisma.Exact<A, ScopedUpsert<Prisma.Args<D, 'upsert'>>>): Prisma.PrismaPromise<Prisma.Result<D, A, 'upsert'>>;
};

type TenantModel = Uncapitalize<Exclude<Prisma.ModelName, 'Tenant' | 'Job'>>;
type RawMethods = '$queryRaw' | '$queryRawUnsafe' | '$executeRaw' | '$executeRawUnsafe';

/** The scoped client inside one of its own transactions. */
export type TenantTx = Omit<Prisma.TransactionClient, TenantModel | RawMethods> & { [M in TenantModel]: ScopedDelegate<PrismaClient[M]> } & TenantClientExtras;

interface TenantClientExtras {
  /** The organisation this client is scoped to. */
  readonly $tenantId: string;
  $tenantQuery<T = unknown>(build: (tenant: Prisma.Sql) => Prisma.Sql): Promise<T>;
}

/** The request's organisation's client: the PrismaClient API, scoped; raw SQL only through `$tenantQuery`. */
export type TenantDb = Omit<PrismaClient, TenantModel | RawMethods | '$transaction' | '$extends'> & { [M in TenantModel]: ScopedDelegate<PrismaClient[M]> } & TenantClientExtras & {
  /** `$tenantQuery` through the `pg` pool on PostgreSQL (rows as `pg` parses them); not in transactions. */
  $tenantQueryDirect<T = unknown>(build: (tenant: Prisma.Sql) => Prisma.Sql): Promise<T[]>;
  $transaction<R>(fn: (tx: TenantTx) => Promise<R>, options?: { maxWait?: number; timeout?: number; isolationLevel?: Prisma.TransactionIsolationLevel }): Promise<R>;
};

/** Scoped clients are cheap but not free to build; reuse one per tenant (bounded). */
export class TenantClients {
  private cache = new Map<string, TenantDb>();
  /** `direct`: the database's `pg` path (PostgreSQL), for `$tenantQueryDirect`. */
  constructor(private prisma: PrismaClient, private direct?: DirectSql, private max = 500) {}
  for(tenantId: string): TenantDb {
    let db = this.cache.get(tenantId);
    if (!db) {
      db = withCommitHooks(scopeToTenant(this.prisma, tenantId, this.direct) as unknown as TenantDb);
      if (this.cache.size >= this.max) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(tenantId, db);
    }
    return db;
  }
}
