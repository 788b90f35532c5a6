// A small round-robin HTTP balancer on loopback, in front of server processes (plain node:http). Bodies
// stream both ways as they come, so uploads, ranges and server-sent events pass through unchanged; a
// client that hangs up closes its request to the process. For the tests: a request header
// `x-upstream: <index>` sends it to that process instead of the next in rotation, and every answer says
// which process served it in `x-upstream`.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll } from 'vitest';

export const UPSTREAM_HEADER = 'x-upstream';

// Headers of one connection, not of the request (RFC 9110 §7.6.1): each side of the balancer sets its own.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

/** Methods without a body or side effects: safe to send again when the connection failed before any answer. */
const BODILESS = new Set(['GET', 'HEAD', 'OPTIONS']);

function endToEnd(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const kept: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) kept[name] = value;
  return kept;
}

export interface Balancer {
  url: string;
  port: number;
  /** The processes' ports, in rotation order; set once they listen. */
  upstreams: number[];
  /** How many requests each process was sent. */
  served: number[];
  close(): Promise<void>;
}

const open: Balancer[] = [];
afterAll(async () => {
  await Promise.all(open.splice(0).map((b) => b.close()));
});

/** Listens on a free loopback port now; requests are answered 503 until `upstreams` is set. */
export async function startBalancer(): Promise<Balancer> {
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    const { upstreams } = balancer;
    if (!upstreams.length) return void res.writeHead(503).end();
    const pinned = req.headers[UPSTREAM_HEADER];
    const index = pinned === undefined ? next++ % upstreams.length : Number(pinned);
    if (!(index in upstreams)) return void res.writeHead(400).end(`no upstream ${String(pinned)}`);
    balancer.served[index] = (balancer.served[index] ?? 0) + 1;
    const headers = endToEnd(req.headers);
    delete headers[UPSTREAM_HEADER];
    headers['x-forwarded-for'] = req.socket.remoteAddress;
    const replayable = BODILESS.has(req.method ?? '');
    const send = (first: boolean) => {
      const forward = http.request(
        { host: '127.0.0.1', port: upstreams[index], method: req.method, path: req.url, headers, agent },
        (answer) => {
          res.writeHead(answer.statusCode!, answer.statusMessage, { ...endToEnd(answer.headers), [UPSTREAM_HEADER]: String(index) });
          // Headers go out at once (an event stream may send its first event much later); then each chunk as it arrives.
          res.flushHeaders();
          answer.pipe(res);
          answer.on('error', () => res.destroy());
        },
      );
      forward.on('error', (error: NodeJS.ErrnoException) => {
        // A kept-alive connection the process closed as it was reused (its idle timeout): the request
        // never reached it. Sent again once, as a proxy does, when it has no body to replay.
        if (first && replayable && forward.reusedSocket && error.code === 'ECONNRESET' && !res.headersSent) return send(false);
        if (res.headersSent) res.destroy();
        else res.writeHead(502, { 'content-type': 'text/plain' }).end(`upstream ${index}: ${error.message}`);
      });
      if (first) req.pipe(forward);
      else forward.end();
      // A client that hangs up (an aborted subscription) ends the request to the process too.
      res.on('close', () => {
        if (!res.writableFinished) forward.destroy();
      });
    };
    send(true);
  });
  let next = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const balancer: Balancer = {
    url: `http://127.0.0.1:${port}`,
    port,
    upstreams: [],
    served: [],
    async close() {
      server.closeAllConnections();
      agent.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  open.push(balancer);
  return balancer;
}
