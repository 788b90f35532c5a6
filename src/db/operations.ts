// Prisma model operations that select rows with a `where` (read, count, change or remove them), for the
// two extensions that add conditions to it: the tenant scope (tenant-scope.ts) and the row policies
// (row-policy.ts). Creates have no `where`; an upsert's is handled apart by each.
export const FILTERING_OPERATIONS: ReadonlySet<string> = new Set([
  'findUnique',
  'findUniqueOrThrow',
  'findFirst',
  'findFirstOrThrow',
  'findMany',
  'count',
  'aggregate',
  'groupBy',
  'update',
  'updateMany',
  'updateManyAndReturn',
  'delete',
  'deleteMany',
]);
