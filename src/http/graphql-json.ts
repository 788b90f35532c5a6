// Queries whose root fields are all served as JSON text (schema/json-fields.ts: the deals list) are
// answered without graphql-js resolving them: PostgreSQL's text is spliced into the response, which
// Yoga writes with the result's own `stringify`. Anything else, and any error on the way (a missing
// pipeline, a permission), goes through normal execution, which gives the usual answer and errors; such
// a fallback is counted and logged (schema/json-fallbacks.ts).
import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context/context.js';
import { planJsonOperation } from '../schema/json-fields.js';
import { noteJsonError } from '../schema/json-fallbacks.js';
import { executionArgs } from './execution-args.js';

export function jsonFieldsPlugin(): Plugin {
  return {
    onExecute({ args: untyped, executeFn, setExecuteFn }) {
      const args = executionArgs(untyped);
      const planned = planJsonOperation(
        args.schema,
        args.document,
        args.operationName,
        (args.variableValues ?? {}) as Record<string, unknown>,
      );
      if (!planned) return;
      setExecuteFn(async (execArgs) => {
        // `async`: a runner that throws at once (its access check) is a rejection here too, not the request's error.
        const settled = await Promise.allSettled(planned.map(async (f) => f.run(executionArgs(execArgs).contextValue as Context)));
        const failed = settled.flatMap((r, i) => (r.status === 'rejected' ? [[planned[i].field, r.reason] as const] : []));
        if (failed.length) {
          // Counted and logged (schema/json-fallbacks.ts), then answered by the resolvers with their own errors.
          for (const [field, error] of failed) noteJsonError(field, error);
          return executeFn(execArgs) as ReturnType<typeof jsonResult>;
        }
        const texts = settled.map((r) => (r as PromiseFulfilledResult<string>).value);
        return jsonResult(`{"data":{${planned.map((f, i) => `${JSON.stringify(f.key)}:${texts[i]}`).join(',')}}}`);
      });
    },
  };
}

/** A result Yoga writes as `text`; its `data`, which nothing on this path reads, is parsed only if asked for. */
function jsonResult(text: string): ExecutionResult & { stringify: () => string } {
  const result = { stringify: () => text } as ExecutionResult & { stringify: () => string };
  Object.defineProperty(result, 'data', { enumerable: true, get: () => (JSON.parse(text) as ExecutionResult).data });
  return result;
}
