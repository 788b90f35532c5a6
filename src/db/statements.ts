// Counts the SQL statements Prisma sends: the test suite and the benchmark use it to prove that a page
// of deals costs the same number of statements whatever its size (no N+1). Requests measured this way
// run one at a time. On the embedded database it also makes each statement a span when tracing is on.
/* eslint-disable @typescript-eslint/no-unsafe-return --
   This module is a Proxy over the driver adapter's methods, forwarding whatever they return. */
import { AsyncLocalStorage } from 'node:async_hooks';
import { traced, tracingEnabled } from '../observability/tracing.js';

export interface StatementCounter {
  count: number;
  /** The most parameters one statement has bound (reset it to measure): no page may bind thousands. */
  mostParameters: number;
}

/** Process-wide total; measure a request by the difference before and after it. */
export const totalStatements: StatementCounter = { count: 0, mostParameters: 0 };

/**
 * The counter of the work being measured (`countStatementsOf`): only the statements that work runs,
 * whatever else the process does meanwhile. The test files share a process; measured as a difference of
 * the process-wide total, a page of leads once read 10 statements instead of 5 under CI load.
 */
const scopedCounter = new AsyncLocalStorage<StatementCounter>();

/** The statements `work` runs (in its own async calls, not the process's other work). */
export async function countStatementsOf(work: () => Promise<unknown>): Promise<number> {
  const counter: StatementCounter = { count: 0, mostParameters: 0 };
  await scopedCounter.run(counter, work);
  return counter.count;
}

/** FUNIL_LOG_SQL=1 prints every statement: handy when a count goes up. */
const logSql = process.env.FUNIL_LOG_SQL === '1';

function record(query?: unknown) {
  if (logSql) console.log('[sql]', (query as { sql?: string } | undefined)?.sql);
  const parameters = (query as { args?: unknown[] } | undefined)?.args?.length ?? 0;
  for (const counter of [totalStatements, scopedCounter.getStore()]) {
    if (!counter) continue;
    counter.count++;
    if (parameters > counter.mostParameters) counter.mostParameters = parameters;
  }
}

/** Counts a statement sent beside Prisma (the direct `pg` path, db/direct.ts). */
export const countStatement = (sql: string) => record({ sql });

const COUNTED = new Set(['queryRaw', 'executeRaw']);

/** A span per statement, when tracing is on and no instrumentation of the driver makes one (PGlite). */
function tracedStatement(query: unknown, run: () => Promise<unknown>): Promise<unknown> {
  return traced('sql', { 'db.system.name': 'postgresql', 'db.query.text': (query as { sql?: string } | undefined)?.sql }, run);
}

function countingQueryable<T extends object>(target: T, traceStatements: boolean): T {
  return new Proxy(target, {
    get(obj, prop, receiver) {
      const value = Reflect.get(obj, prop, receiver);
      if (typeof value !== 'function') return value;
      if (COUNTED.has(prop as string)) {
        return (...args: unknown[]) => {
          record(args[0]);
          return traceStatements && tracingEnabled() ? tracedStatement(args[0], () => value.apply(obj, args)) : value.apply(obj, args);
        };
      }
      if (prop === 'startTransaction') {
        return async (...args: unknown[]) => countingQueryable(await value.apply(obj, args), traceStatements);
      }
      return value.bind(obj);
    },
  });
}

/**
 * Wraps a Prisma driver adapter factory so every statement it runs is counted, and with `traceStatements`
 * traced (the embedded database: on PostgreSQL the pg instrumentation traces them).
 */
export function countingAdapterFactory<F extends { connect(): Promise<object> }>(factory: F, { traceStatements = false } = {}): F {
  return new Proxy(factory, {
    get(obj, prop, receiver) {
      const value = Reflect.get(obj, prop, receiver);
      if (prop === 'connect') return async () => countingQueryable(await (value as () => Promise<object>).call(obj), traceStatements);
      return typeof value === 'function' ? value.bind(obj) : value;
    },
  });
}
