// A GraphQL subscription over WebSocket, as a front end's graphql-ws client opens it: a real socket to
// a listening server, the key in connectionParams, its `next` values collected in the background. The
// same stream interface as SSE (sse.ts), plus how the socket closed.
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { liveStream, type SseStream } from './sse.js';

export interface WsStream<T> extends SseStream<T> {
  /** The close code and reason, once the socket closed. */
  closed?: { code: number; reason: string };
  client: Client;
}

/** A graphql-ws client on `baseUrl` (http:// → ws://), connected before it answers. */
export function wsClient(baseUrl: string, key: string | null, onClosed: (closed: { code: number; reason: string }) => void = () => {}) {
  return createClient({
    url: `${baseUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: key === null ? {} : { authorization: `Bearer ${key}` },
    retryAttempts: 0,
    lazy: true,
    on: { closed: (event) => onClosed({ code: (event as CloseEvent).code, reason: String((event as CloseEvent).reason) }) },
  });
}

export function subscribeWs<T>(baseUrl: string, key: string | null, query: string, variables: Record<string, unknown> = {}): WsStream<T> {
  let dispose = () => {};
  const client = wsClient(baseUrl, key, (closed) => {
    stream.closed = closed;
    stream.completed = true;
  });
  const stream = liveStream<T>(101, async () => {
    dispose();
    await client.dispose();
  }) as WsStream<T>;
  stream.client = client;
  dispose = client.subscribe<Record<string, T>>(
    { query, variables },
    {
      next: (payload) => {
        if (payload.errors) stream.errors.push(...(payload.errors as SseStream<T>['errors']));
        if (payload.data) stream.received.push(...Object.values(payload.data));
      },
      error: (error) => {
        if (Array.isArray(error)) stream.errors.push(...(error as SseStream<T>['errors']));
        stream.completed = true;
      },
      complete: () => {
        stream.completed = true;
      },
    },
  );
  return stream;
}
