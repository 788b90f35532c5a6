// graphql-sse's single connection mode at /graphql (its distinct connections mode, one POST with
// `Accept: text/event-stream` per subscription, is Yoga's own): PUT reserves a stream and answers its
// token, GET with the token (header `X-GraphQL-Event-Stream-Token` or `?token=`) opens it, POST with the
// token runs a subscription on it, DELETE with the token and `?operationId=` ends one. Every request
// carries the API key as any other; a token belongs to the key that reserved it (another key's token
// is 404, as an unknown one). Subscriptions run through Yoga's envelop like the other transports; only
// subscriptions run on a stream. A stream lives in the process that reserved it: behind several
// processes, a client's requests must reach the same one (sticky sessions), or use WebSocket or the
// distinct connections mode. Bounds: a reserved stream holds one of the key's connection places
// (LIVE_SUBSCRIPTIONS_PER_KEY) until it closes; one not opened within RESERVATION_MS is dropped; a
// stream whose client reads more than LIVE_BACKLOG_MAX results behind is closed.
import { randomUUID } from 'node:crypto';
import { getOperationAST, GraphQLError, OperationTypeNode, type ExecutionArgs } from 'graphql';
import { createHandler } from 'graphql-sse/lib/use/fetch';
import type { TenantViewer } from '../auth/viewer.js';
import { LIVE_BACKLOG_MAX } from '../events/live.js';
import type { LiveSubscriptions } from './live-subscriptions.js';
import type { WebSocketDeps } from './graphql-ws.js';

const TOKEN_HEADER = 'x-graphql-event-stream-token';
/** A reserved stream not opened within this is dropped. */
const RESERVATION_MS = 30_000;

/** A request of the single connection mode (anything else on /graphql is Yoga's). */
export function isSingleConnectionRequest(request: Request): boolean {
  if (request.method === 'PUT' || request.method === 'DELETE') return true;
  return request.headers.has(TOKEN_HEADER) || new URL(request.url).searchParams.has('token');
}

interface Reservation {
  keyId: string;
  release: () => void;
  /** Results handed to the stream, and read by its client. */
  sent: number;
  read: number;
  /** Closes the opened stream (its client lags, or its key no longer holds). */
  cut?: () => void;
}

const tokenOf = (request: Request) => request.headers.get(TOKEN_HEADER) ?? new URL(request.url).searchParams.get('token');

export function graphqlSseSingleConnection(
  deps: Pick<WebSocketDeps, 'getEnveloped' | 'live'> & { live: LiveSubscriptions },
  reservationMs = RESERVATION_MS,
) {
  const reservations = new Map<string, Reservation>();
  const callers = new WeakMap<Request, { viewer: TenantViewer; requestId: string }>();
  /** The requests this module makes itself, to close a stream never opened (no caller, no key). */
  const closings = new WeakSet<Request>();
  const drop = (token: string) => {
    const reservation = reservations.get(token);
    if (!reservation) return;
    reservations.delete(token);
    reservation.release();
    reservation.cut?.();
  };

  const handler = createHandler({
    authenticate(req) {
      const given = tokenOf(req.raw);
      if (closings.has(req.raw)) return given!;
      const { viewer } = callers.get(req.raw)!;
      if (given) return reservations.get(given)?.keyId === viewer.apiKeyId ? given : [null, { status: 404, statusText: 'Not Found' }];
      if (req.method !== 'PUT') return null;
      const token = randomUUID();
      const release = deps.live.hold('socket', viewer, () => drop(token));
      if (!release)
        return [
          JSON.stringify({ errors: [deps.live.refusal().toGraphQLError()] }),
          { status: 429, statusText: 'Too Many Requests', headers: { 'content-type': 'application/json; charset=utf-8' } },
        ];
      reservations.set(token, { keyId: viewer.apiKeyId, release, sent: 0, read: 0 });
      // Never opened: dropped, so that reservations cannot pile up.
      setTimeout(() => {
        if (reservations.get(token) && !reservations.get(token)!.cut) void closeUnopened(token);
      }, reservationMs).unref();
      return token;
    },
    onSubscribe(req, params) {
      const { viewer, requestId } = callers.get(req.raw)!;
      const enveloped = deps.getEnveloped({ viewer, requestId, request: req.raw });
      let document;
      try {
        document = enveloped.parse(params.query as string);
      } catch (e) {
        return { errors: [e instanceof GraphQLError ? e : new GraphQLError('Consulta inválida')] };
      }
      const errors = enveloped.validate(enveloped.schema, document);
      if (errors.length) return { errors: [...errors] };
      if (getOperationAST(document, params.operationName)?.operation !== OperationTypeNode.SUBSCRIPTION)
        return {
          errors: [
            new GraphQLError('Num fluxo do graphql-sse só correm assinaturas; consultas e mutações vão por POST /graphql sem token.', {
              extensions: { code: 'INVALID_INPUT', status: 400 },
            }),
          ],
        };
      return Promise.resolve(enveloped.contextFactory()).then(
        (contextValue) =>
          enveloped.subscribe({
            schema: enveloped.schema,
            document,
            contextValue,
            variableValues: params.variables,
            operationName: params.operationName,
          } as ExecutionArgs) as never,
      );
    },
    onNext(_ctx, req) {
      const reservation = reservations.get(tokenOf(req.raw) ?? '');
      if (!reservation) return;
      if (++reservation.sent - reservation.read > LIVE_BACKLOG_MAX) drop(tokenOf(req.raw)!);
    },
  });

  /** Opens a reserved stream itself and closes it at once: the library then forgets it. */
  async function closeUnopened(token: string) {
    const reservation = reservations.get(token);
    if (!reservation) return;
    reservations.delete(token);
    reservation.release();
    const request = new Request('http://funil/graphql', { headers: { accept: 'text/event-stream', [TOKEN_HEADER]: token } });
    closings.add(request);
    const response = await handler(request);
    await response.body?.cancel().catch(() => {});
  }

  return {
    async handle(request: Request, viewer: TenantViewer, requestId: string): Promise<Response> {
      callers.set(request, { viewer, requestId });
      const token = tokenOf(request);
      const response = await handler(request);
      const reservation = token ? reservations.get(token) : undefined;
      if (request.method !== 'GET' || !reservation || !response.body || response.status !== 200) return response;
      // The opened stream: counted as its client reads it; closed when dropped; its place freed when it ends.
      const reader = response.body.getReader();
      let cancel = () => {};
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          cancel = () => {
            try {
              controller.close();
            } catch {
              // closed already
            }
            void reader.cancel().catch(() => {});
          };
        },
        async pull(controller) {
          const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
          if (done) {
            drop(token!);
            controller.close();
            return;
          }
          if (value) reservation.read += countEvents(value);
          controller.enqueue(value);
        },
        cancel() {
          drop(token!);
          return reader.cancel();
        },
      });
      reservation.cut = () => cancel();
      return new Response(body, { status: response.status, headers: response.headers });
    },
    close() {
      for (const token of [...reservations.keys()]) drop(token);
    },
  };
}

const NEXT = new TextEncoder().encode('event: next');

/** `next` events in a chunk of the stream. */
function countEvents(chunk: Uint8Array): number {
  let n = 0;
  outer: for (let i = 0; i + NEXT.length <= chunk.length; i++) {
    for (let j = 0; j < NEXT.length; j++) if (chunk[i + j] !== NEXT[j]) continue outer;
    n++;
  }
  return n;
}
