// Yoga on /graphql: GraphiQL for people exploring (graphiql-page.ts: no CDN, the schema fetched again
// once a key is set), the same context as REST, AppErrors carried in extensions {code, status},
// everything else masked; depth, alias and cost limits on every operation; 503 for a saturated database
// (graphql-saturation.ts); protocol errors with their HTTP status (graphql-protocol.ts); multipart
// requests with files spooled to disk
// (graphql-multipart.ts) instead of Yoga's in-memory parser.
import { getOperationAST, GraphQLError, Kind, OperationTypeNode, parse, type GraphQLSchema, type SelectionSetNode } from 'graphql';
import { createYoga, type GraphiQLOptions } from 'graphql-yoga';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import type { Viewer } from '../auth/viewer.js';
import { createContext, type ContextDeps } from '../context/context.js';
import { costLimitPlugin, MAX_COST } from './graphql-cost.js';
import { answerSizePlugin } from './graphql-size.js';
import { saturationStatusPlugin } from './graphql-saturation.js';
import { clientError, shapeValidationErrors } from './graphql-errors.js';
import { cleanInputPlugin } from './graphql-input.js';
import { graphqlMultipartPlugin } from './graphql-multipart.js';
import { graphqlProtocolPlugin, methodNotAllowed } from './graphql-protocol.js';
import type { FileSpool } from '../storage/file-spool.js';
import { jsonFieldsPlugin } from './graphql-json.js';
import { nextCursorPlugin } from './graphql-next-cursor.js';
import { graphqlTracingPlugin } from './graphql-tracing.js';
import { tracingEnabled } from '../observability/tracing.js';
import type { RequestFacts } from './request-facts.js';
import { graphiqlPage } from './graphiql-page.js';
import { liveSubscriptionsPlugin, type LiveSubscriptions } from './live-subscriptions.js';

export interface GraphQLServerContext {
  viewer: Viewer | null;
  requestId: string;
  /** Filled in for the request log (the operation name). */
  facts?: RequestFacts;
  /** Where a multipart request's files go; the app disposes of it once the request is answered. */
  spool?: FileSpool;
}

/** The page embeds all of GraphiQL (~9 MB): rendered once. */
function localGraphiQL() {
  let page: string | undefined;
  return (options?: GraphiQLOptions) => (page ??= graphiqlPage(options));
}

export function createGraphQLServer(schema: GraphQLSchema, deps: ContextDeps, live: LiveSubscriptions) {
  return createYoga<GraphQLServerContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // CORS is the app's (http/cors.ts), the same for /graphql and /backend.
    cors: false,
    // The Authorization header is there to fill in: `Bearer <API key>`.
    graphiql: { title: 'Funil GraphQL', headers: JSON.stringify({ Authorization: '' }, null, 2) },
    renderGraphiQL: localGraphiQL(),
    logging: false,
    // Multipart requests are read by graphqlMultipartPlugin; other bodies are read by the app
    // under the 10 MB bound (http/body.ts) before Yoga sees them; Yoga's own limit would stream them again.
    multipart: false,
    maxRequestBodySize: false,
    // Over WebSocket `request` is the socket's: its signal aborts when the socket closes.
    context: ({ viewer, requestId, request }) => createContext(deps, { viewer, requestId, signal: request.signal }),
    maskedErrors: {
      maskError(error) {
        const refused = error instanceof GraphQLError ? methodNotAllowed(error) : null;
        return refused ?? clientError(error, deps.config);
      },
    },
    plugins: [
      graphqlMultipartPlugin(),
      graphqlProtocolPlugin(),
      cleanInputPlugin(),
      maxDepthPlugin({ n: 10 }),
      maxAliasesPlugin({ n: 15 }),
      costLimitPlugin({ maxCost: MAX_COST }),
      // After every check that may refuse a subscription: it holds the key's place for the stream.
      liveSubscriptionsPlugin(live),
      answerSizePlugin(),
      saturationStatusPlugin(),
      shapeValidationErrors(deps.config),
      nextCursorPlugin(),
      // Last: it replaces execution for the queries it serves, after every check above.
      jsonFieldsPlugin(),
      // Wraps whichever execution runs; absent unless tracing is on.
      ...(tracingEnabled() ? [graphqlTracingPlugin()] : []),
    ],
  });
}

/**
 * The root fields a JSON GraphQL request's mutation selects (what an Idempotency-Key applies to, and
 * whose access is checked before a replay), or null when it runs no mutation. Bodies that do not parse
 * are not mutations: Yoga answers them with its own errors.
 */
export async function mutationFieldsOf(request: Request): Promise<string[] | null> {
  try {
    const { query, operationName } = (await request.json()) as { query?: unknown; operationName?: unknown };
    if (typeof query !== 'string') return null;
    const document = parse(query);
    const operation = getOperationAST(document, typeof operationName === 'string' ? operationName : undefined);
    if (operation?.operation !== OperationTypeNode.MUTATION) return null;
    const fragments = new Map<string, SelectionSetNode>();
    for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d.selectionSet);
    const fields = new Set<string>();
    const seen = new Set<string>();
    const collect = (set: SelectionSetNode) => {
      for (const s of set.selections) {
        if (s.kind === Kind.FIELD) {
          if (!s.name.value.startsWith('__')) fields.add(s.name.value);
        } else if (s.kind === Kind.INLINE_FRAGMENT) collect(s.selectionSet);
        else if (!seen.has(s.name.value)) {
          seen.add(s.name.value);
          const fragment = fragments.get(s.name.value);
          if (fragment) collect(fragment);
        }
      }
    };
    collect(operation.selectionSet);
    return [...fields];
  } catch {
    return null;
  }
}
