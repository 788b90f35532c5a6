// The Node HTTP(S) server around the app's fetch handler: optional TLS, optional refusal of plain HTTP,
// an early 413 for oversized declared bodies, and the stop sequence a balancer expects (RunningServer.close).
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { createServerAdapter } from '@whatwg-node/server';
import type { Config } from '../config.js';
import type { ResponseStyle } from '../domains/manifest.js';
import { AppError } from '../errors.js';
import { MAX_BODY_BYTES, tooLarge } from './body.js';
import { fetchWithBodyDeadline } from './body-deadline.js';
import { errorResponse } from './responses.js';

/** What the server serves: the app's fetch handler, and the error style of a path for its own refusals. */
export interface ServedApp {
  fetch(request: Request): Promise<Response>;
  styleOf(pathname: string): ResponseStyle;
}

export interface RunningServer {
  server: http.Server;
  url: string;
  /**
   * The stop sequence: at once `/ready` answers 503, idle keep-alive connections are closed and every
   * response carries `Connection: close` (a connection serves at most the request it has); after
   * `delayMs`, new connections are refused. Resolves when every request received has been answered.
   */
  close(options?: { delayMs?: number }): Promise<void>;
}

const READY_PATH = /^\/ready(\?|$)/;

export async function listen(app: ServedApp, config: Config): Promise<RunningServer> {
  const adapter = createServerAdapter((request: Request) => {
    // Load balancers probe health over plain HTTP; everything else must arrive over HTTPS when required.
    const probe = /^\/(health|ready)$/.test(new URL(request.url).pathname);
    if (config.requireHttps && !probe) {
      const proto = config.trustProxy ? request.headers.get('x-forwarded-proto') : new URL(request.url).protocol.replace(':', '');
      if (proto !== 'https' && !config.tlsCertFile) {
        return errorResponse('envelope', new AppError('FORBIDDEN', 'HTTPS é obrigatório'));
      }
    }
    return fetchWithBodyDeadline(request, config.requestBodyTimeoutMs, (r) => app.fetch(r));
  });

  let stopping = false;
  /** Responses under way, to close their connections once the stop begins. */
  const answering = new Set<http.ServerResponse>();

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
    answering.add(res);
    res.once('close', () => answering.delete(res));
    // Refuse before reading a byte of a body declared too large.
    if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) {
      const refusal = errorResponse(app.styleOf((req.url ?? '/').split('?')[0]), tooLarge());
      void refusal.text().then((body) => {
        res.writeHead(413, { 'content-type': 'application/json; charset=utf-8', connection: 'close' });
        res.end(body);
        req.destroy();
      });
      return;
    }
    adapter(req, res);
  };

  // Node's own limit on receiving a whole request, a little after ours: it also cuts a late body no
  // handler reads (answered before reading it), which Node would otherwise wait five minutes for.
  const timeouts = { requestTimeout: config.requestBodyTimeoutMs + 1_000, connectionsCheckingInterval: 1_000 };
  const server = config.tlsCertFile
    ? https.createServer({ ...timeouts, cert: fs.readFileSync(config.tlsCertFile), key: fs.readFileSync(config.tlsKeyFile!) }, listener)
    : http.createServer(timeouts, listener);
  server.keepAliveTimeout = 5_000;
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
      for (const res of answering) {
        if (!res.headersSent) res.setHeader('connection', 'close');
        // Sent already as keep-alive: the connection is closed once its response is done.
        else res.once('finish', () => setImmediate(() => server.closeIdleConnections()));
      }
      server.closeIdleConnections();
      return new Promise<void>((resolve) => {
        // server.close() also closes the connections idle by then, and calls back when the last one ends.
        const refuseNew = () => server.close(() => resolve());
        if (delayMs > 0) setTimeout(refuseNew, delayMs);
        else refuseNew();
      });
    },
  };
}
