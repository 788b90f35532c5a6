// Per-request state: one mechanism for everything that must live exactly as long as a request
// (dataloaders, values a loader already settled). Instances never cross requests or tenants.
import DataLoader from 'dataloader';
import type { Context } from './context.js';

/** The value `create` makes for this request, made once per request and key. */
export function perRequest<T>(ctx: Context, key: object, create: () => T): T {
  let value = ctx.perRequest.get(key) as T | undefined;
  if (value === undefined) {
    value = create();
    ctx.perRequest.set(key, value);
  }
  return value;
}

/** A dataloader defined once by a domain and instantiated per request on first use. */
export function defineLoader<K, V, C = K>(create: (ctx: Context) => DataLoader<K, V, C>): (ctx: Context) => DataLoader<K, V, C> {
  return (ctx) => perRequest(ctx, create, () => create(ctx));
}

/** Orders rows to match the keys DataLoader asked for; missing keys get `fallback`. */
export function byKey<K, V, F>(keys: readonly K[], rows: V[], keyOf: (row: V) => K, fallback: F): (V | F)[] {
  const map = new Map<K, V>();
  for (const row of rows) map.set(keyOf(row), row);
  return keys.map((k) => map.get(k) ?? fallback);
}

/** Groups rows per key, in key order; keys with no rows get []. */
export function groupByKey<K, V>(keys: readonly K[], rows: V[], keyOf: (row: V) => K): V[][] {
  const map = new Map<K, V[]>();
  for (const row of rows) {
    const k = keyOf(row);
    let list = map.get(k);
    if (!list) map.set(k, (list = []));
    list.push(row);
  }
  return keys.map((k) => map.get(k) ?? []);
}
