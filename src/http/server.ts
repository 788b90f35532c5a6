// The Node HTTP(S) server around the app's fetch handler: optional TLS, optional refusal of plain HTTP,
// an early 413 for oversized declared bodies, and a graceful close that lets in-flight requests finish.
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
  close(): Promise<void>;
}

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

  const listener: http.RequestListener = (req, res) => {
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
    close: () =>
      new Promise<void>((resolve) => {
        // Stop accepting, let in-flight requests finish, drop idle keep-alive sockets.
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
