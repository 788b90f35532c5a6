// Per-request dataloaders. A domain defines a loader once (`defineLoader`) and calls it with the
// context; the instance lives as long as the request, so batching and caching never cross requests
// or tenants.
import DataLoader from 'dataloader';
import type { Context } from './context.js';

export function defineLoader<K, V, C = K>(create: (ctx: Context) => DataLoader<K, V, C>): (ctx: Context) => DataLoader<K, V, C> {
  return (ctx) => {
    let loader = ctx.loaders.get(create) as DataLoader<K, V, C> | undefined;
    if (!loader) {
      loader = create(ctx);
      ctx.loaders.set(create, loader);
    }
    return loader;
  };
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
