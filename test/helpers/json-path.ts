// The two answers the JSON-path tests compare byte for byte: Yoga's (the JSON path when it serves the
// selection) and graphql-js running the resolvers alone (no Yoga, no plugin).
import { execute, parse } from 'graphql';
import { authenticate } from '../../src/auth/authenticate.js';
import { createContext } from '../../src/context/context.js';
import { schema } from '../../src/domains/index.js';
import type { TestClient } from './app.js';

/** `orgKey` is read at each call: the organisation is made in beforeAll, after the helpers are. */
export function jsonPath(api: TestClient, orgKey: () => string) {
  /** POST /graphql as the text the server sends. */
  async function graphqlText(query: string, variables: Record<string, unknown> = {}, key = orgKey()) {
    const response = await api.raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, text: await response.text() };
  }

  /** What graphql-js and the resolvers answer for a query, without the JSON path. */
  async function resolverText(query: string, variables: Record<string, unknown> = {}, key = orgKey()) {
    const viewer = await authenticate(api.db.prisma, `Bearer ${key}`);
    const contextValue = createContext(api.app.deps, { viewer, requestId: 'resolvers' });
    const result = await execute({ schema, document: parse(query), contextValue, variableValues: variables });
    return JSON.stringify(result);
  }

  return { graphqlText, resolverText };
}
