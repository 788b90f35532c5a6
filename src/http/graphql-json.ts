// Queries whose root fields are all served as JSON text (schema/json-fields.ts: the deals list) are
// answered without graphql-js resolving them: PostgreSQL's text is spliced into the response, which
// Yoga writes with the result's own `stringify`. Anything else, and any error on the way (a missing
// pipeline, a permission), goes through normal execution, which gives the usual answer and errors.
import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context/context.js';
import { planJsonOperation } from '../schema/json-fields.js';
import { executionArgs } from './execution-args.js';

export function jsonFieldsPlugin(): Plugin {
  return {
    onExecute({ args: untyped, executeFn, setExecuteFn }) {
      const args = executionArgs(untyped);
      const planned = planJsonOperation(args.schema, args.document, args.operationName, (args.variableValues ?? {}) as Record<string, unknown>);
      if (!planned) return;
      setExecuteFn(async (execArgs) => {
        let texts: string[];
        try {
          texts = await Promise.all(planned.map((f) => f.run(executionArgs(execArgs).contextValue as Context)));
        } catch {
          return executeFn(execArgs) as ReturnType<typeof jsonResult>;
        }
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
