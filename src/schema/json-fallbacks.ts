// When a field that PostgreSQL can write as JSON text (schema/json-fields.ts) is answered by the
// resolvers instead, it is never silent: counted per root field and reason (here, for tests and the
// bench, and as funil_json_path_fallbacks_total when metrics are on) and logged. Reasons:
// - selection: the operation asks for something the JSON path does not serve (a graph-only edge, another
//   root field without a JSON path); logged once per compiled operation, counted per request.
// - error: the JSON path failed, or the arguments did not coerce, and the resolvers answered (with their
//   own error, e.g. a 404 or a 400); an expected error is logged at info, anything else (a bug in the
//   SQL) at warn.
import { AppError } from '../errors.js';
import { log } from '../log.js';
import { countJsonPathFallback } from '../observability/metrics.js';

export type JsonFallbackReason = 'selection' | 'error';

const counts = new Map<string, number>();
const keyOf = (field: string, reason: JsonFallbackReason) => `${field}:${reason}`;

/** Counts one request of `field` answered by the resolvers. */
export function countJsonFallback(field: string, reason: JsonFallbackReason): void {
  const key = keyOf(field, reason);
  counts.set(key, (counts.get(key) ?? 0) + 1);
  countJsonPathFallback(field, reason);
}

/** An operation the JSON path refuses, once when it is compiled: which fields, and what it asks for. */
export function logJsonRefusal(fields: string[], detail: string): void {
  log.info('json path: selection left to the resolvers', { fields, detail });
}

/** A JSON path run that failed: counted, and logged with its error. */
export function noteJsonError(field: string, error: unknown): void {
  countJsonFallback(field, 'error');
  if (error instanceof AppError) log.info('json path: error, answered by the resolvers', { field, code: error.kind, error: error.message });
  else log.warn('json path: unexpected error, answered by the resolvers', { field, error: String((error as Error)?.stack ?? error) });
}

/** Variables or arguments the schema refuses: the resolvers answer with the usual error (counted as one). */
export function noteJsonInputRefused(fields: string[]): void {
  for (const field of fields) countJsonFallback(field, 'error');
  if (fields.length) log.info('json path: arguments refused, answered by the resolvers', { fields });
}

/** Requests of `field` the resolvers answered instead of the JSON path, since the process started. */
export function jsonFallbackCount(field: string, reason: JsonFallbackReason): number {
  return counts.get(keyOf(field, reason)) ?? 0;
}
