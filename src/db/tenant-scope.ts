// Tenant scoping in one place: a Prisma client extension that adds `tenant_id` to the filter of every
// read, update and delete, and to the data of every create, on every tenant-owned model. Resolvers and
// services use the request's scoped client (ctx.db) and never write tenant_id themselves: its type
// says so (create data without tenant_id, no raw SQL but through `$tenantQuery`, which binds the
// tenant). A raw statement's tenant condition comes from one helper, `tenantIs` (src/tenant-sql.ts),
// in `$tenantQuery` and outside the scoped client alike; test/platform/tenant-sql.test.ts fails on a
// statement that binds `tenant_id` to a value itself. Relations are safe too: composite (tenant_id, id)
// foreign keys keep related rows in the same tenant.
//
// A tenant table's primary key is (tenant_id, id), so for Prisma `id` alone is not unique. On the
// scoped client it is: `where: { id }` of findUnique, update, delete and upsert, and a `cursor: { id }`
// (at the top of a read, or in an included or selected relation: Pothos' connections) become the key
// `{ tenant_id_id: { tenant_id, id } }`.
//
// A client may also carry a caller's visibility (row-policy.ts): `TenantClients.forViewer` adds the
// registered row policies' conditions to the queries of the models they bind and hands raw statements
// their SQL form (`visible`, the second argument of `$tenantQuery`'s builder).
/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-argument --
   This module rewrites the untyped arguments of every Prisma model operation. */
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { withCommitHooks } from './after-commit.js';
import { FILTERING_OPERATIONS } from './operations.js';
import type { DirectSql } from './direct.js';
import { SnapshotCounts } from './snapshot-counts.js';
import { systemVisibility, visibilityOf, visibleArgs, type Visibility, type VisibleSql } from './row-policy.js';
import type { TenantViewer } from '../auth/viewer.js';

const CREATING = new Set(['create', 'createMany', 'createManyAndReturn']);
/** Models that are not tenant-owned (the job queue serves every organisation). */
const GLOBAL_MODELS = new Set(['Tenant', 'Job']);

/** Operations whose `where` names one row by a unique key. */
const UNIQUE = new Set(['findUnique', 'findUniqueOrThrow', 'update', 'delete', 'upsert']);

type Args = Record<string, any>;

/**
 * A unique `where` on the tenant's key: `{ id, …rest }` becomes `{ tenant_id_id: { tenant_id, id }, …rest }`,
 * and a (tenant_id, id) key given whole gets this tenant. Anything else is filtered by tenant_id.
 */
function uniqueWhere(where: Args, tenant_id: string): Args {
  if (where.tenant_id_id) return { ...where, tenant_id_id: { ...where.tenant_id_id, tenant_id } };
  if (typeof where.id !== 'string') return { ...where, tenant_id };
  const { id, ...rest } = where;
  return { ...rest, tenant_id_id: { tenant_id, id } };
}

/**
 * `args` with every `cursor: { id }` in it (a connection's page start: at the top of a read, or in a
 * relation included or selected by any operation) turned into the tenant's key.
 */
function keyedCursors(args: Args, tenant_id: string): Args {
  let out = args;
  if (args.cursor && typeof args.cursor.id === 'string') out = { ...out, cursor: uniqueWhere(args.cursor, tenant_id) };
  for (const nesting of ['include', 'select'] as const) {
    const relations = args[nesting];
    if (!relations || typeof relations !== 'object') continue;
    let changed: Args | undefined;
    for (const [name, nested] of Object.entries(relations)) {
      if (!nested || typeof nested !== 'object') continue;
      const keyed = keyedCursors(nested as Args, tenant_id);
      if (keyed !== nested) (changed ??= { ...relations })[name] = keyed;
    }
    if (changed) out = { ...out, [nesting]: changed };
  }
  return out;
}

function scopeArgs(operation: string, args: Args, tenant_id: string) {
  args = keyedCursors(args, tenant_id);
  if (UNIQUE.has(operation)) {
    const where = uniqueWhere(args.where ?? {}, tenant_id);
    return operation === 'upsert' ? { ...args, where, create: { ...args.create, tenant_id } } : { ...args, where };
  }
  if (FILTERING_OPERATIONS.has(operation)) return { ...args, where: { ...args.where, tenant_id } };
  if (CREATING.has(operation)) {
    const data = Array.isArray(args.data) ? args.data.map((d: object) => ({ ...d, tenant_id })) : { ...args.data, tenant_id };
    return { ...args, data };
  }
  throw new Error(`Operation ${operation} is not tenant-scoped; use the scoped client's supported operations`);
}

/** Raised when a raw statement built for a tenant does not use the tenant it was given. */
class UnscopedSqlError extends Error {}

/** A raw statement's builder: the tenant as a bound `uuid`, and the row policies' SQL conditions for the caller. */
export type TenantSqlBuilder = (tenant: Prisma.Sql, visible: VisibleSql) => Prisma.Sql;

/**
 * `restricted`: a caller's visibility (its key not ''), whose conditions every query gets; without one the
 * client sees every row and raw statements get the system's conditions (TRUE).
 */
function scopeToTenant(
  prisma: PrismaClient,
  tenantId: string,
  direct: DirectSql | undefined,
  counts: SnapshotCounts,
  restricted: Visibility | undefined,
  unrestricted: () => TenantDb,
) {
  const tenant = Prisma.sql`${tenantId}::uuid`;
  const bound = (build: TenantSqlBuilder) => {
    const sql = build(tenant, (restricted ?? systemVisibility()).sql);
    if (!sql.values.includes(tenantId)) throw new UnscopedSqlError('Raw statement without the tenant condition');
    return sql;
  };
  type RawClient = { $queryRaw<R>(query: Prisma.Sql): Promise<R>; $transaction?: unknown };
  return prisma.$extends({
    name: 'tenant-scope',
    query: {
      $allModels: {
        $allOperations({ model, operation, args, query }) {
          if (restricted) args = visibleArgs(model, operation, (args ?? {}) as Args, restricted);
          if (GLOBAL_MODELS.has(model)) return query(args);
          return query(scopeArgs(operation, (args ?? {}) as Args, tenantId));
        },
      },
    },
    client: {
      $tenantId: tenantId,
      $unrestricted: unrestricted,
      $counts: counts,
      /**
       * A raw statement for this tenant: `build` gets the tenant id as a bound `uuid` fragment and must
       * use it (a statement that does not bind the tenant is refused before it runs), and the row
       * policies' conditions for this client's caller (`visible.conversation(alias)`).
       */
      $tenantQuery<T = unknown>(this: object, build: TenantSqlBuilder): Promise<T> {
        return (Prisma.getExtensionContext(this) as unknown as RawClient).$queryRaw<T>(bound(build));
      },
      /**
       * `$tenantQuery` on the fastest driver path: the `pg` pool directly on PostgreSQL, with rows as `pg`
       * parses them (see DirectSql), so a statement meant for both paths casts its columns to types both
       * read alike (text, int, bool). Prisma's path on PGlite, and inside a transaction (which the pool
       * would escape).
       */
      $tenantQueryDirect<T = unknown>(this: object, build: TenantSqlBuilder): Promise<T[]> {
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
type WithoutTenant<D> = D extends readonly (infer I)[]
  ? DistributiveOmit<I, 'tenant_id' | 'tenant'>[]
  : DistributiveOmit<D, 'tenant_id' | 'tenant'>;
type ScopedData<A> = Omit<A, 'data'> & { data: WithoutTenant<A extends { data: infer D } ? D : never> };
type ScopedUpsert<A> = Omit<A, 'create'> & { create: WithoutTenant<A extends { create: infer D } ? D : never> };

/**
 * A unique `where` of a tenant table on the scoped client: Prisma's own, or one with `id` (the scope
 * makes it the (tenant_id, id) key). Tables without an `id` (link tables) keep Prisma's.
 */
export type ScopedWhereUnique<W> = 'tenant_id_id' extends keyof W ? W | (Partial<W> & { id: string }) : W;
/** Arguments whose `cursor` (a connection's page start) may name its row by `id` alone. */
export type ScopedCursor<A> = A extends { cursor?: infer C } ? Omit<A, 'cursor'> & { cursor?: ScopedWhereUnique<NonNullable<C>> } : A;
/** Arguments whose included relations may hold such cursors (Pothos plans its connections so). */
type ScopedInclude<A> = A extends { include?: infer I }
  ? Omit<A, 'include'> & { include?: { [K in keyof NonNullable<I>]: ScopedCursor<NonNullable<I>[K]> } | null }
  : A;
type ScopedWhere<A> = A extends { where: infer W } ? Omit<A, 'where'> & { where: ScopedWhereUnique<W> } : A;

/** Each scoped operation's arguments. */
interface ScopedArgs<D> {
  findUnique: ScopedInclude<ScopedWhere<Prisma.Args<D, 'findUnique'>>>;
  findUniqueOrThrow: ScopedInclude<ScopedWhere<Prisma.Args<D, 'findUniqueOrThrow'>>>;
  findFirst: ScopedInclude<ScopedCursor<Prisma.Args<D, 'findFirst'>>>;
  findFirstOrThrow: ScopedInclude<ScopedCursor<Prisma.Args<D, 'findFirstOrThrow'>>>;
  findMany: ScopedInclude<ScopedCursor<Prisma.Args<D, 'findMany'>>>;
  update: ScopedInclude<ScopedWhere<Prisma.Args<D, 'update'>>>;
  delete: ScopedInclude<ScopedWhere<Prisma.Args<D, 'delete'>>>;
  upsert: ScopedInclude<ScopedWhere<ScopedUpsert<Prisma.Args<D, 'upsert'>>>>;
  create: ScopedInclude<ScopedData<Prisma.Args<D, 'create'>>>;
  createMany: ScopedData<Prisma.Args<D, 'createMany'>>;
  createManyAndReturn: ScopedInclude<ScopedData<Prisma.Args<D, 'createManyAndReturn'>>>;
}

type ScopedDelegate<D, S extends ScopedArgs<D> = ScopedArgs<D>> = Omit<D, keyof ScopedArgs<D>> & {
  findUnique<A extends S['findUnique']>(args: Prisma.Exact<A, S['findUnique']>): Prisma.PrismaPromise<Prisma.Result<D, A, 'findUnique'>>;
  findUniqueOrThrow<A extends S['findUniqueOrThrow']>(
    args: Prisma.Exact<A, S['findUniqueOrThrow']>,
  ): Prisma.PrismaPromise<Prisma.Result<D, A, 'findUniqueOrThrow'>>;
  findFirst<A extends S['findFirst']>(args?: Prisma.Exact<A, S['findFirst']>): Prisma.PrismaPromise<Prisma.Result<D, A, 'findFirst'>>;
  findFirstOrThrow<A extends S['findFirstOrThrow']>(
    args?: Prisma.Exact<A, S['findFirstOrThrow']>,
  ): Prisma.PrismaPromise<Prisma.Result<D, A, 'findFirstOrThrow'>>;
  findMany<A extends S['findMany']>(args?: Prisma.Exact<A, S['findMany']>): Prisma.PrismaPromise<Prisma.Result<D, A, 'findMany'>>;
  update<A extends S['update']>(args: Prisma.Exact<A, S['update']>): Prisma.PrismaPromise<Prisma.Result<D, A, 'update'>>;
  delete<A extends S['delete']>(args: Prisma.Exact<A, S['delete']>): Prisma.PrismaPromise<Prisma.Result<D, A, 'delete'>>;
  upsert<A extends S['upsert']>(args: Prisma.Exact<A, S['upsert']>): Prisma.PrismaPromise<Prisma.Result<D, A, 'upsert'>>;
  create<A extends S['create']>(args: Prisma.Exact<A, S['create']>): Prisma.PrismaPromise<Prisma.Result<D, A, 'create'>>;
  createMany<A extends S['createMany']>(args: Prisma.Exact<A, S['createMany']>): Prisma.PrismaPromise<Prisma.BatchPayload>;
  createManyAndReturn<A extends S['createManyAndReturn']>(
    args: Prisma.Exact<A, S['createManyAndReturn']>,
  ): Prisma.PrismaPromise<Prisma.Result<D, A, 'createManyAndReturn'>>;
};

type TenantModel = Uncapitalize<Exclude<Prisma.ModelName, 'Tenant' | 'Job'>>;
type RawMethods = '$queryRaw' | '$queryRawUnsafe' | '$executeRaw' | '$executeRawUnsafe';

/** The scoped client inside one of its own transactions. */
export type TenantTx = Omit<Prisma.TransactionClient, TenantModel | RawMethods> & {
  [M in TenantModel]: ScopedDelegate<PrismaClient[M]>;
} & TenantClientExtras;

interface TenantClientExtras {
  /** The organisation this client is scoped to. */
  readonly $tenantId: string;
  $tenantQuery<T = unknown>(build: TenantSqlBuilder): Promise<T>;
}

/** The request's organisation's client: the PrismaClient API, scoped; raw SQL only through `$tenantQuery`. */
export type TenantDb = Omit<PrismaClient, TenantModel | RawMethods | '$transaction' | '$extends'> & {
  [M in TenantModel]: ScopedDelegate<PrismaClient[M]>;
} & TenantClientExtras & {
    /** `$tenantQuery` through the `pg` pool on PostgreSQL (rows as `pg` parses them); not in transactions. */
    $tenantQueryDirect<T = unknown>(build: TenantSqlBuilder): Promise<T[]>;
    /** The database's remembered page totals (snapshot-counts.ts), shared by every organisation's client. */
    readonly $counts: SnapshotCounts;
    /**
     * The organisation's client without the caller's row policies (the tenant scope stays): only to answer
     * about a write the caller was allowed to make (a conversation an operator just handed to another
     * department). The client itself on a caller who sees every row.
     */
    $unrestricted(): TenantDb;
    $transaction<R>(
      fn: (tx: TenantTx) => Promise<R>,
      options?: { maxWait?: number; timeout?: number; isolationLevel?: Prisma.TransactionIsolationLevel },
    ): Promise<R>;
  };

/** Scoped clients are cheap but not free to build; reuse one per tenant (bounded). */
export class TenantClients {
  private cache = new Map<string, TenantDb>();
  private counts: SnapshotCounts;
  /**
   * `direct`: the database's `pg` path (PostgreSQL), for `$tenantQueryDirect`; `oneSnapshot`: whether
   * page totals may be remembered per snapshot (Database.oneSnapshot).
   */
  constructor(
    private prisma: PrismaClient,
    private direct?: DirectSql,
    oneSnapshot = false,
    private max = 500,
  ) {
    this.counts = new SnapshotCounts(oneSnapshot);
  }
  /** The organisation's client for the system (jobs, webhooks) and callers who see every row. */
  for(tenantId: string): TenantDb {
    return this.scoped(tenantId);
  }
  /** The client of a caller: the organisation's, under the caller's row policies (row-policy.ts). */
  forViewer(viewer: TenantViewer): TenantDb {
    const visibility = visibilityOf(viewer);
    return visibility.key ? this.scoped(viewer.tenantId, visibility) : this.scoped(viewer.tenantId);
  }
  private scoped(tenantId: string, restricted?: Visibility): TenantDb {
    const key = restricted ? `${tenantId}/${restricted.key}` : tenantId;
    let db = this.cache.get(key);
    if (!db) {
      const unrestricted = restricted ? () => this.scoped(tenantId) : () => db!;
      db = withCommitHooks(scopeToTenant(this.prisma, tenantId, this.direct, this.counts, restricted, unrestricted) as unknown as TenantDb);
      if (this.cache.size >= this.max) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(key, db);
    }
    return db;
  }
}

const clientsOfPrisma = new WeakMap<PrismaClient, TenantClients>();

/**
 * The tenant clients of a database, one set per Prisma client: the app's requests, the workers' jobs,
 * the provider's webhook and the CLI all scope through the same cached clients.
 */
export function tenantClientsOf(prisma: PrismaClient, direct?: DirectSql, oneSnapshot = false): TenantClients {
  let clients = clientsOfPrisma.get(prisma);
  if (!clients) clientsOfPrisma.set(prisma, (clients = new TenantClients(prisma, direct, oneSnapshot)));
  return clients;
}
