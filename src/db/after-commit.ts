// Work that must wait for a transaction to commit (announcing a change to live subscribers): registered
// inside the transaction with `afterCommit(tx, fn)`, run once `$transaction` has resolved, dropped when
// it rolls back. The tenant clients' `$transaction` keeps the list (TenantClients wraps it here).
/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-call --
   This module wraps Prisma's $transaction, whose overloads take untyped callbacks and arrays. */
import { log } from '../log.js';

const pending = new WeakMap<object, (() => void)[]>();

/** Runs `callback` after the transaction of `tx` commits; never when it rolls back. */
export function afterCommit(tx: object, callback: () => void) {
  const callbacks = pending.get(tx);
  // A programming error: the change would be announced before (or without) its commit.
  if (!callbacks) throw new Error('afterCommit: call it with the transaction of a tenant client');
  callbacks.push(callback);
}

type Transactional = { $transaction: (...args: any[]) => Promise<unknown> };

/** The client with a `$transaction` that runs the callbacks its transaction registered, once it commits. */
export function withCommitHooks<D extends Transactional>(db: D): D {
  const transaction = async (fn: unknown, options?: unknown) => {
    if (typeof fn !== 'function') return db.$transaction(fn, options);
    let callbacks: (() => void)[] = [];
    const result = await db.$transaction((tx: object) => {
      callbacks = [];
      pending.set(tx, callbacks);
      return fn(tx);
    }, options);
    for (const callback of callbacks) {
      try {
        callback();
      } catch (error) {
        log.error('after-commit callback failed', { error: (error as Error).message });
      }
    }
    return result;
  };
  return new Proxy(db, { get: (target, prop, receiver) => (prop === '$transaction' ? transaction : Reflect.get(target, prop, receiver)) });
}
