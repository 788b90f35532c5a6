// No answer is built past 10 MB of JSON (decisions.md "Bounded work"): on GraphQL the cost check bounds
// the objects, this bounds their bytes (a knowledge item's content may hold 2,000,000 characters). The
// executed result is measured by a walk that stops at the limit, before any JSON text is made; over it,
// the answer is a 400 INVALID_INPUT naming the limit instead. REST (rest/sofa.ts, rest/handler.ts) uses
// the same measure and the same refusal.
import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { invalidInput } from '../errors.js';
import { requestError } from './graphql-errors.js';
import { yieldIfSpent } from '../schema/time-slices.js';

export const MAX_ANSWER_BYTES = 10 * 1024 * 1024;

/** Whether `value` as JSON would pass `limit` characters (an upper bound: strings are counted with their quotes, escapes ignored but UTF-8 expansion counted). */
export function jsonLongerThan(value: unknown, limit: number): boolean {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') total += Buffer.byteLength(v) + 3;
    else if (v === null || typeof v !== 'object') total += 8;
    else if (Array.isArray(v)) {
      total += 2 + v.length;
      for (const item of v) stack.push(item);
    } else {
      for (const [key, item] of Object.entries(v)) {
        total += key.length + 4;
        stack.push(item);
      }
    }
    if (total > limit) return true;
  }
  return false;
}

/** The refusal of an answer past `maxBytes` (GraphQL and REST alike). */
export function answerTooLarge(maxBytes = MAX_ANSWER_BYTES) {
  return invalidInput(`Resposta maior que ${maxBytes / 1024 / 1024} MB: peça menos itens (first, limit) ou menos campos.`, {
    max_bytes: maxBytes,
  });
}

export function answerSizePlugin(maxBytes = MAX_ANSWER_BYTES): Plugin {
  return {
    onExecute() {
      return {
        async onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in (result as object)) return; // subscriptions: one event at a time
          // The measure and then the JSON text each get a slice of their own (schema/time-slices.ts).
          await yieldIfSpent();
          const tooLarge = jsonLongerThan((result as ExecutionResult).data, maxBytes);
          await yieldIfSpent();
          if (tooLarge) setResult({ errors: [requestError(answerTooLarge(maxBytes))] });
        },
      };
    },
  };
}
