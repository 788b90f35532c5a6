// A saturated database answers 503 with Retry-After on /graphql as on REST (decisions.md "Bounded
// work"), where GraphQL would answer 200 with the error in `errors`: when a single operation served
// nothing (every root field null) and every error it has is SERVICE_UNAVAILABLE (a busy extraction
// queue's too), the client should retry later and its HTTP library should know it. An answer with data, or with another error, stays
// as GraphQL has it; so do batches (one status cannot speak for all of their operations).
import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { RETRY_AFTER_SECONDS } from '../errors.js';

export function saturationStatusPlugin(): Plugin {
  return {
    // eslint-disable-next-line @typescript-eslint/unbound-method -- envelop's hooks hand out setters to destructure
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result) || Symbol.asyncIterator in (result as object)) return;
      const single = result as ExecutionResult;
      if (!onlySaturated(single)) return;
      // A busy queue says how long it waits (extensions.retry_after); the database's default otherwise.
      const seconds = Math.max(
        ...single.errors!.map((e) => (typeof e.extensions?.retry_after === 'number' ? e.extensions.retry_after : RETRY_AFTER_SECONDS)),
      );
      setResult({ ...single, extensions: { ...single.extensions, http: { status: 503, headers: { 'Retry-After': String(seconds) } } } });
    },
  };
}

function onlySaturated({ data, errors }: ExecutionResult): boolean {
  if (!errors?.length || !errors.every((e) => e.extensions?.code === 'SERVICE_UNAVAILABLE')) return false;
  return data == null || Object.values(data).every((value) => value === null);
}
