// A GraphQL subscription over server-sent events, as a browser or curl consumes it: a real HTTP request
// (fetch to a listening server) with `accept: text/event-stream`, its `next` events collected in the
// background. Readiness without timing: `ready` repeats a change every subscriber can see until the
// stream shows one, so the subscription is registered (through Redis too) before the test goes on.
import { listen, type RunningServer } from '../../src/http/server.js';
import { createClient as createSseClient } from 'graphql-sse';
import type { TestClient } from './app.js';

export interface SseStream<T> {
  status: number;
  /** The field's values received so far. */
  received: T[];
  errors: { message: string; extensions?: { code?: string } }[];
  /** Set once the server completed the stream. */
  completed: boolean;
  /** Resolves with the first value received that matches (waiting for it, up to `timeoutMs`). */
  until(match: (value: T) => boolean, what?: string, timeoutMs?: number): Promise<T>;
  /** Calls `probe` until a value it caused arrives (`caused` tells). */
  ready(probe: () => Promise<unknown>, caused: (value: T) => boolean): Promise<void>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The test app on a real socket (port chosen by the system), closed with the returned server. */
export async function listenOnSocket(api: TestClient): Promise<RunningServer> {
  return listen(api.app, { ...api.config, port: 0, host: '127.0.0.1' });
}

/** A stream's received values and its waits, whatever carries it (SSE here, WebSocket in ws.ts). */
export function liveStream<T>(status: number, close: () => Promise<void>): SseStream<T> {
  const stream: SseStream<T> = {
    status,
    received: [],
    errors: [],
    completed: false,
    async until(match, what = 'a matching event', timeoutMs = 20_000) {
      const started = Date.now();
      for (;;) {
        const found = stream.received.find(match);
        if (found) return found;
        if (stream.completed || Date.now() - started > timeoutMs)
          throw new Error(
            `no ${what}; got ${JSON.stringify(stream.received)} ${JSON.stringify(stream.errors)}${stream.completed ? ' (stream completed)' : ''}`,
          );
        await sleep(20);
      }
    },
    async ready(probe, caused) {
      for (let attempt = 0; attempt < 100; attempt++) {
        await probe();
        const started = Date.now();
        while (Date.now() - started < 500) {
          if (stream.received.some(caused)) return;
          await sleep(20);
        }
      }
      throw new Error(`the subscription never received a probe: ${JSON.stringify(stream.errors)}`);
    },
    close,
  };
  return stream;
}

export async function subscribeSse<T>(
  baseUrl: string,
  key: string | null,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<SseStream<T>> {
  const controller = new AbortController();
  const response = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify({ query, variables }),
    signal: controller.signal,
  });
  const stream = liveStream<T>(response.status, async () => {
    controller.abort();
    await reader?.cancel().catch(() => {});
    await reading.catch(() => {});
  });
  const streaming = response.body && response.headers.get('content-type')?.includes('text/event-stream');
  const reader = streaming ? response.body!.getReader() : undefined;
  const reading = (async () => {
    if (!reader) return;
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (/^event: complete/m.test(block)) stream.completed = true;
        const data = block.split('\n').find((l) => l.startsWith('data:'));
        if (!data || data.length <= 6) continue;
        const payload = JSON.parse(data.slice(5));
        if (payload.errors) stream.errors.push(...payload.errors);
        if (payload.data) stream.received.push(...Object.values<T>(payload.data));
      }
    }
    stream.completed = true;
  })();
  reading.catch(() => {});
  return stream;
}

/**
 * A subscription in graphql-sse's single connection mode, as its client opens it (PUT for a token, GET
 * for the stream, POST for the operation), the key on every request.
 */
export function subscribeSseSingle<T>(baseUrl: string, key: string, query: string, variables: Record<string, unknown> = {}) {
  const client = createSseClient({
    url: `${baseUrl}/graphql`,
    singleConnection: true,
    headers: { authorization: `Bearer ${key}` },
    retryAttempts: 0,
  });
  let dispose = () => {};
  const stream = liveStream<T>(200, async () => {
    dispose();
    client.dispose();
  });
  dispose = client.subscribe<Record<string, T>>(
    { query, variables },
    {
      next: (payload) => {
        if (payload.errors) stream.errors.push(...(payload.errors as unknown as SseStream<T>['errors']));
        if (payload.data) stream.received.push(...Object.values(payload.data));
      },
      error: (error) => {
        stream.errors.push({ message: String((error as Error)?.message ?? error) });
        stream.completed = true;
      },
      complete: () => {
        stream.completed = true;
      },
    },
  );
  return stream;
}
