// The Node HTTP(S) server around the app's fetch handler: optional TLS, optional refusal of plain HTTP,
// an early 413 for oversized declared bodies, and the stop sequence a balancer expects (RunningServer.close).
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import { createServerAdapter } from '@whatwg-node/server';
import { MAX_BODY_BYTES, type Config } from '../config.js';
import { AppError, tooLarge } from '../errors.js';
import { fetchWithBodyDeadline } from './body-deadline.js';
import { errorResponse, graphqlErrorResponse, type ResponseStyle } from './responses.js';

/** What the server serves: the app's fetch handler, and the error style of a path for its own refusals. */
export interface ServedApp {
  fetch(request: Request, client?: { address?: string }): Promise<Response>;
  styleOf(pathname: string): ResponseStyle;
  /** WebSocket upgrades: true when taken. */
  upgrade?(request: http.IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Closes the WebSockets, when the stop's delay ends. */
  endSockets?(): void;
}

export interface RunningServer {
  server: http.Server;
  url: string;
  /**
   * The stop sequence: at once `/ready` answers 503, every response carries `Connection: close` and idle
   * keep-alive connections are closed, so a connection serves at most the request it has; after
   * `delayMs`, new connections are refused and those that have not sent a whole request are closed.
   * A connection that has not sent its first request yet, even one opened just before the stop, is
   * served during the delay like a new one (with no delay, it is closed at once). Resolves when every
   * request received has been answered.
   */
  close(options?: { delayMs?: number }): Promise<void>;
}

/** The server's own refusals, in the shape of the path: GraphQL errors on /graphql, else the area's style. */
function refusal(app: ServedApp, pathname: string, error: AppError, restStyle?: ResponseStyle): Response {
  return pathname === '/graphql' ? graphqlErrorResponse(error) : errorResponse(restStyle ?? app.styleOf(pathname), error);
}

const READY_PATH = /^\/ready(\?|$)/;

/** After a 413, how much of the rest of the body is read (and dropped) before hanging up, and for how long. */
export const LINGER_MAX_BYTES = 64 * 1024 * 1024;
export const LINGER_MAX_MS = 30_000;

/**
 * Answers 413 with `Connection: close`, then reads and drops the rest of the body before closing. A client
 * that sends its whole body without waiting for `100-continue` (Node's fetch, browsers) reads its answer
 * only once it has sent everything: closing at once resets the connection under it (EPIPE, ECONNRESET)
 * and the answer is lost. The response stays open (its last byte unsent is none: the body is whole, only
 * Node's close is held back) until the body has ended, LINGER_MAX_BYTES have come, or LINGER_MAX_MS.
 * Returns the hang-up, for a server that stops meanwhile.
 */
function refuseWhole(req: http.IncomingMessage, res: http.ServerResponse, body: string): () => void {
  res.writeHead(413, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  });
  res.write(body);
  let received = 0;
  const hangUp = () => {
    clearTimeout(timer);
    req.removeListener('data', count);
    req.destroy();
  };
  const count = (chunk: Buffer) => {
    received += chunk.length;
    if (received > LINGER_MAX_BYTES) hangUp();
  };
  const timer = setTimeout(hangUp, LINGER_MAX_MS);
  req.on('data', count);
  req.once('end', () => {
    clearTimeout(timer);
    res.end(); // Node closes the connection once this is sent (Connection: close)
  });
  req.once('error', hangUp);
  return hangUp;
}

export async function listen(app: ServedApp, config: Config): Promise<RunningServer> {
  const adapter = createServerAdapter<{ req?: http.IncomingMessage }>((request: Request, context) => {
    // Load balancers probe health over plain HTTP; everything else must arrive over HTTPS when required.
    const { pathname } = new URL(request.url);
    const probe = /^\/(health|ready)$/.test(pathname);
    if (config.requireHttps && !probe) {
      const proto = config.trustProxy ? request.headers.get('x-forwarded-proto') : new URL(request.url).protocol.replace(':', '');
      if (proto !== 'https' && !config.tlsCertFile) {
        return refusal(app, pathname, new AppError('FORBIDDEN', 'HTTPS é obrigatório'), 'envelope');
      }
    }
    const client = { address: context.req?.socket.remoteAddress };
    return fetchWithBodyDeadline(request, config.requestBodyTimeoutMs, (r) => app.fetch(r, client));
  });

  let stopping = false;
  /** Responses under way; once the stop begins, a connection without one is closed. */
  const answering = new Map<http.ServerResponse, net.Socket>();
  const connections = new Set<net.Socket>();
  const inUse = (socket: net.Socket) => [...answering.values()].includes(socket);
  /** Closes a connection after what it has to send: a client never sees a response cut. */
  const hangUp = (socket: net.Socket) => {
    if (socket.writableFinished) return void socket.destroy();
    socket.once('finish', () => socket.destroy());
    socket.end();
  };
  /** Connections that have sent a request: once idle, they are keep-alive ones waiting for a next. */
  const served = new WeakSet<net.Socket>();
  /** Connections reading the rest of a refused body (refuseWhole). */
  const lingering = new Set<() => void>();
  /**
   * Closes the connections with no request being answered: only the idle keep-alive ones while the stop's
   * delay runs (a new connection's first request may be on its way: closing it reset that request, which
   * a balancer's probe saw as ECONNRESET instead of the 503, under CI load), all of them at its end (a
   * request never sent whole cannot hold the stop).
   */
  const hangUpUnused = ({ freshToo }: { freshToo: boolean }) => {
    for (const socket of connections) if (!inUse(socket) && (freshToo || served.has(socket))) hangUp(socket);
  };

  const listener: http.RequestListener = (req, res) => {
    if (stopping) {
      res.setHeader('connection', 'close');
      // Balancers take the process out of rotation on this; until the listener closes it still serves.
      if (READY_PATH.test(req.url ?? '')) {
        res.writeHead(503, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify({ status: 'stopping' }));
        return;
      }
    }
    const socket = req.socket;
    served.add(socket);
    answering.set(res, socket);
    res.once('close', () => {
      answering.delete(res);
      // Its response may have started as keep-alive before the stop.
      if (stopping && !inUse(socket)) hangUp(socket);
    });
    // Refuse a body declared too large before storing a byte of it.
    if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) {
      void refusal(app, (req.url ?? '/').split('?')[0], tooLarge())
        .text()
        .then((body) => {
          // A stop does not wait for the rest of a refused body.
          if (stopping) return void refuseWhole(req, res, body)();
          const hangUp = refuseWhole(req, res, body);
          lingering.add(hangUp);
          res.once('close', () => lingering.delete(hangUp));
        });
      return;
    }
    void adapter(req, res);
  };

  // Node's own limit on receiving a whole request, a little after ours: it also cuts a late body no
  // handler reads (answered before reading it), which Node would otherwise wait five minutes for.
  const timeouts = { requestTimeout: config.requestBodyTimeoutMs + 1_000, connectionsCheckingInterval: 1_000 };
  const server = config.tlsCertFile
    ? https.createServer({ ...timeouts, cert: fs.readFileSync(config.tlsCertFile), key: fs.readFileSync(config.tlsKeyFile!) }, listener)
    : http.createServer(timeouts, listener);
  server.keepAliveTimeout = 5_000;
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    // A WebSocket lives past its request: the stop closes it (endSockets), not the drain of requests.
    connections.delete(socket as net.Socket);
    const refuse = (status: string) => void socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    if (stopping) return refuse('503 Service Unavailable');
    if (config.requireHttps && !config.tlsCertFile) {
      const proto = config.trustProxy ? req.headers['x-forwarded-proto'] : 'http';
      if (proto !== 'https') return refuse('403 Forbidden');
    }
    if (!app.upgrade?.(req, socket, head)) refuse('404 Not Found');
  });
  server.on(config.tlsCertFile ? 'secureConnection' : 'connection', (socket: net.Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `${config.tlsCertFile ? 'https' : 'http'}://${config.host}:${port}`;
  return {
    server,
    url,
    close: ({ delayMs = 0 } = {}) => {
      stopping = true;
      for (const hangUp of lingering) hangUp();
      for (const res of answering.keys()) if (!res.headersSent) res.setHeader('connection', 'close');
      hangUpUnused({ freshToo: delayMs === 0 });
      return new Promise<void>((resolve) => {
        const refuseNew = () => {
          app.endSockets?.();
          server.close(() => resolve()); // calls back when the last connection has ended
          hangUpUnused({ freshToo: true });
        };
        if (delayMs > 0) setTimeout(refuseNew, delayMs);
        else refuseNew();
      });
    },
  };
}
