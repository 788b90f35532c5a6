// GraphQL subscriptions over WebSocket at /graphql: the graphql-transport-ws protocol of the graphql-ws
// library (the transport Apollo Client and urql reach for first). The API key comes in the connection's
// `connectionParams.authorization` ("Bearer <key>" or the key alone) and is checked as on HTTP: failed
// attempts count against the address's budget, and the connection against the key's rate limit. Only
// subscriptions run over a socket (queries and mutations go over HTTP, with their rate limits and
// Idempotency-Key); each runs through Yoga's envelop like an SSE stream, so visibility, permissions,
// cost and the bounds of live-subscriptions.ts are the same. Close codes: 4401 a key that is missing,
// invalid or no longer holds; 4403 a token that is not an organisation's key; 4429 too many
// connections for the key or too many failed attempts; 1001 the server stopping.
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { getOperationAST, GraphQLError, OperationTypeNode, type DocumentNode, type ExecutionArgs } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import type { TenantViewer, Viewer } from '../auth/viewer.js';
import { AppError } from '../errors.js';
import { requestIdFrom, runWithRequestId } from '../observability/request-context.js';
import type { LiveSubscriptions } from './live-subscriptions.js';
import type { GraphQLServerContext } from './graphql.js';
import { log } from '../log.js';

/** A message from a client (a subscribe with its query) is at most this large. */
const MAX_MESSAGE_BYTES = 1024 * 1024;

export interface WebSocketDeps {
  getEnveloped(context: GraphQLServerContext & { request: { signal: AbortSignal } }): {
    parse: (source: string) => DocumentNode;
    validate: (schema: unknown, document: DocumentNode) => readonly GraphQLError[];
    contextFactory: () => unknown;
    execute: (args: ExecutionArgs) => unknown;
    subscribe: (args: ExecutionArgs) => unknown;
    schema: unknown;
  };
  live: LiveSubscriptions;
  /** The HTTP authentication, with its budgets: the viewer, or an AppError. */
  authenticate(authorization: string | null, request: http.IncomingMessage): Promise<Viewer>;
}

/** What a socket's context carries besides graphql-ws' own `socket` and `request`. */
type SocketExtra = {
  viewer?: TenantViewer;
  /** Aborted when the socket closes: the subscriptions' contexts see it as their request's signal. */
  closed?: AbortController;
};

/** A close frame's reason holds at most 123 bytes. */
function closeReason(text: string): string {
  let reason = text;
  while (Buffer.byteLength(reason) > 123) reason = reason.slice(0, -1);
  return reason;
}

const onlySubscriptions = () =>
  new GraphQLError('Por WebSocket só correm assinaturas (subscription); consultas e mutações vão por HTTP: POST /graphql.', {
    extensions: { code: 'INVALID_INPUT', status: 400 },
  });

export function graphqlWebSocket(deps: WebSocketDeps) {
  const server = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  useServer<Record<string, unknown>, SocketExtra>(
    {
      connectionInitWaitTimeout: 10_000,
      async onConnect(ctx) {
        const { socket, request } = ctx.extra;
        const given = ctx.connectionParams?.authorization ?? ctx.connectionParams?.Authorization;
        const header = typeof given === 'string' ? (/^Bearer\s/i.test(given) ? given : `Bearer ${given}`) : null;
        let viewer: Viewer;
        try {
          viewer = await deps.authenticate(header, request);
        } catch (e) {
          const error = e instanceof AppError ? e : new AppError('SERVICE_UNAVAILABLE', 'Serviço indisponível');
          const code = error.kind === 'RATE_LIMITED' ? 4429 : error.kind === 'UNAUTHORIZED' ? 4401 : 4503;
          socket.close(code, closeReason(error.message));
          return false;
        }
        if (viewer.kind !== 'user') {
          socket.close(4403, closeReason('Assinaturas exigem uma chave de API de uma organização'));
          return false;
        }
        const release = deps.live.hold('socket', viewer, (error) => socket.close(4401, closeReason(error.message)));
        if (!release) {
          socket.close(4429, closeReason(deps.live.refusal().message));
          return false;
        }
        const closed = new AbortController();
        socket.once('close', () => {
          release();
          closed.abort();
        });
        ctx.extra.viewer = viewer;
        ctx.extra.closed = closed;
        return true;
      },
      async onSubscribe(ctx, _id, payload) {
        const { viewer, closed } = ctx.extra;
        const requestId = requestIdFrom(null);
        return runWithRequestId(requestId, async () => {
          const enveloped = deps.getEnveloped({ viewer: viewer!, requestId, request: { signal: closed!.signal } });
          let document: DocumentNode;
          try {
            document = enveloped.parse(payload.query);
          } catch (e) {
            return [
              e instanceof GraphQLError ? e : new GraphQLError('Consulta inválida', { extensions: { code: 'INVALID_INPUT', status: 400 } }),
            ];
          }
          const errors = enveloped.validate(enveloped.schema, document);
          if (errors.length) return [...errors];
          if (getOperationAST(document, payload.operationName)?.operation !== OperationTypeNode.SUBSCRIPTION) return [onlySubscriptions()];
          return {
            schema: enveloped.schema,
            document,
            operationName: payload.operationName,
            variableValues: payload.variables,
            contextValue: await enveloped.contextFactory(),
            rootValue: { execute: enveloped.execute, subscribe: enveloped.subscribe },
          } as ExecutionArgs;
        });
      },
      execute: (args) => (args.rootValue as { execute: (a: ExecutionArgs) => never }).execute(args),
      subscribe: (args) => (args.rootValue as { subscribe: (a: ExecutionArgs) => never }).subscribe(args),
    },
    server,
  );
  server.on('error', (error) => log.warn('websocket server error', { error: error.message }));

  return {
    /** Takes an upgrade request to /graphql. */
    upgrade(request: http.IncomingMessage, socket: Duplex, head: Buffer) {
      server.handleUpgrade(request, socket, head, (ws) => server.emit('connection', ws, request));
    },
    /** A stop: every socket is told (1001) and closed, cut a second later if its client does not answer. */
    close() {
      for (const client of server.clients) {
        client.close(1001, 'Servidor parando');
        setTimeout(() => client.terminate(), 1_000).unref();
      }
    },
  };
}
