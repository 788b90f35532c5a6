// HTTP statuses that tell what went wrong with a GraphQL request, whatever the client accepts: an
// invalid document (syntax, unknown field, depth or cost limits) is 400 like bad variables, a mutation
// over GET or a method other than GET/POST is 405 with `Allow`, a batch (an array body) is 400. Yoga
// answers 200 for validation errors to `Accept: application/json` clients and its 405s would be
// re-dressed as 400 by the error mask; these keep them. Also notes the operation name for the request log
// and counts it for /metrics.
import { GraphQLError, getOperationAST, Kind } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { countGraphQLOperation } from '../observability/metrics.js';
import type { RequestFacts } from './request-facts.js';
import { executionArgs } from './execution-args.js';

/** A protocol refusal Yoga raised (405), as it should reach the client; null for anything else. */
export function methodNotAllowed(error: GraphQLError): GraphQLError | null {
  const http = error.extensions?.http as { status?: number; headers?: Record<string, string> } | undefined;
  if (http?.status !== 405) return null;
  const message = /mutation/i.test(error.message)
    ? 'Mutações só podem ser enviadas por POST'
    : 'O endpoint /graphql aceita apenas GET e POST';
  return new GraphQLError(message, {
    extensions: {
      code: 'METHOD_NOT_ALLOWED',
      status: 405,
      http: { status: 405, headers: { allow: http.headers?.Allow ?? http.headers?.allow ?? 'GET, POST' } },
    },
  });
}

export function graphqlProtocolPlugin(): Plugin<{ facts?: RequestFacts }> {
  return {
    onExecute({ args: untyped }) {
      const args = executionArgs(untyped);
      const facts = (args.contextValue as { facts?: RequestFacts }).facts;
      const operation = getOperationAST(args.document, args.operationName);
      if (operation) countGraphQLOperation(operation.operation, operation.name?.value);
      if (!facts || !operation) return;
      // An anonymous operation is logged by its kind and root fields: `query tags,leads`.
      const roots = operation.selectionSet.selections.map((s) => (s.kind === Kind.FIELD ? s.name.value : '…'));
      facts.operation = operation.name?.value ?? `${operation.operation} ${roots.join(',')}`;
    },
  };
}
