// Yoga on /graphql: GraphiQL for people exploring, the same context as REST, AppErrors carried in
// extensions {code, status}, everything else masked; depth, alias and cost limits on every operation.
import type { GraphQLSchema } from 'graphql';
import { createYoga } from 'graphql-yoga';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import type { Viewer } from '../auth/viewer.js';
import { createContext, type ContextDeps } from '../context/context.js';
import { costLimitPlugin } from './graphql-cost.js';
import { clientError, shapeValidationErrors } from './graphql-errors.js';
import { cleanInputPlugin } from './graphql-input.js';

export interface GraphQLServerContext {
  viewer: Viewer | null;
  requestId: string;
}

export function createGraphQLServer(schema: GraphQLSchema, deps: ContextDeps) {
  return createYoga<GraphQLServerContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // CORS is the app's (http/cors.ts), the same for /graphql and /backend.
    cors: false,
    graphiql: { title: 'Funil GraphQL', headers: JSON.stringify({ Authorization: 'Bearer <your API key>' }) },
    logging: false,
    context: ({ viewer, requestId }) => createContext(deps, { viewer, requestId }),
    maskedErrors: { maskError: (error) => clientError(error, deps.config) },
    plugins: [
      cleanInputPlugin(),
      maxDepthPlugin({ n: 10 }),
      maxAliasesPlugin({ n: 15 }),
      costLimitPlugin({ maxCost: 10000 }),
      shapeValidationErrors(deps.config),
    ],
  });
}
