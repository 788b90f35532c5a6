// A span around each GraphQL execution on /graphql when tracing is on (src/observability/tracing.ts):
// the resolvers' SQL statements become its children. Added last, so it wraps whichever execution runs
// (graphql-js, or the JSON path of graphql-json.ts).
import { getOperationAST, type DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { traced } from '../observability/tracing.js';
import { executionArgs } from './execution-args.js';

export function executionAttributes(document: DocumentNode, operationName: string | null | undefined, transport: 'graphql' | 'rest') {
  const operation = getOperationAST(document, operationName);
  return { 'graphql.operation.type': operation?.operation, 'graphql.operation.name': operation?.name?.value, 'funil.transport': transport };
}

export function graphqlTracingPlugin(): Plugin {
  return {
    onExecute({ args: untyped, executeFn, setExecuteFn }) {
      const args = executionArgs(untyped);
      const attributes = executionAttributes(args.document, args.operationName, 'graphql');
      setExecuteFn((execArgs) => traced('graphql.execute', attributes, async () => executeFn(execArgs) as Promise<unknown>));
    },
  };
}
