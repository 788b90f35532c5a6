// The application as one fetch handler: /graphql (Yoga), /backend and the media proxy (the route table,
// derived from the domains' manifests), its reference (/backend/openapi.json, /backend/docs), /health,
// /ready. The Node server (http/server.ts) and the tests drive this same handler.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { accessOfField, checkAccess } from './auth/access.js';
import { authenticate } from './auth/authenticate.js';
import type { Config } from './config.js';
import type { ContextDeps } from './context/context.js';
import type { Database } from './db/client.js';
import { tenantClientsOf } from './db/tenant-scope.js';
import { domains, schema } from './domains/index.js';
import { AppError, clientGone, normalizeError } from './errors.js';
import { readLimitedBody } from './http/body.js';
import { createApiReference } from './http/api-reference.js';
import { corsPreflight, withCors } from './http/cors.js';
import { createGraphQLServer, mutationFieldsOf } from './http/graphql.js';
import { authenticateWithin, clientAddress, RateLimits, setRateLimitHeaders, socketAddress } from './http/rate-limit.js';
import { idempotencyKeyOf, multipartKeyRefused, runIdempotent } from './http/idempotency.js';
import { noteViewer, type RequestFacts } from './http/request-facts.js';
import { activeOrganisations } from './http/active-organisations.js';
import { errorResponse, graphqlErrorResponse, longBodyAsBytes, type ResponseStyle } from './http/responses.js';
import { queueStats } from './jobs/stats.js';
import { log, errorText } from './log.js';
import { enableMetrics, observeDatabase, observeRequest } from './observability/metrics.js';
import { METRICS_PATH, metricsAuthorized, metricsResponse } from './observability/metrics-route.js';
import { requestIdFrom, runWithRequestId } from './observability/request-context.js';
import { createRestHandler } from './rest/handler.js';
import { buildOpenApiDocument, type OpenApiDocument } from './rest/openapi/document.js';
import { eventSchemasOf } from './rest/openapi/webhooks.js';
import { provideEventSchemas } from './domains/webhooks/event-types.js';
import { buildRouteTable } from './rest/route-table.js';
import { FileSpool } from './storage/file-spool.js';
import { isMultipartForm } from './storage/multipart-form.js';
import { createStorage } from './storage/create.js';
import { configureSecrets } from './secrets.js';
import { closeLiveHub, liveHub, liveReady } from './events/live.js';
import { graphqlWebSocket } from './http/graphql-ws.js';
import { graphqlSseSingleConnection, isSingleConnectionRequest } from './http/graphql-sse.js';
import { LiveSubscriptions } from './http/live-subscriptions.js';

/**
 * GraphQL bodies get the same 10 MB bound as REST, and are read before Yoga sees them, so that a body
 * arriving too late or cut by the client is answered as on REST (Yoga would call it invalid JSON).
 * Multipart bodies are not: their reader (http/graphql-multipart.ts) streams them under the same bound.
 */
async function withBoundedBody(request: Request, RequestClass: typeof Request): Promise<Request> {
  if (!request.body) return request;
  const body = await readLimitedBody(request);
  return new RequestClass(request.url, {
    method: request.method,
    headers: request.headers,
    body: Buffer.from(body),
    signal: request.signal,
  });
}

/** What the server knows of a request beyond the request itself. */
export interface ClientInfo {
  /** The connection's remote address. */
  address?: string;
}

export interface App {
  fetch(request: Request, client?: ClientInfo): Promise<Response>;
  /** The error style of a path before any route matched it (answers the Node server gives itself). */
  styleOf(pathname: string): ResponseStyle;
  deps: ContextDeps;
  /** Lets go of what the app holds besides the database (the Redis connections of rate limits and live data). */
  close(): void;
  /** Takes a WebSocket upgrade request (GraphQL at /graphql); false for any other path. */
  upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** A stop: closes every WebSocket (1001). */
  endSockets(): void;
  /** The live subscriptions this app holds open. */
  live: LiveSubscriptions;
}

export function createApp(config: Config, db: Database): App {
  configureSecrets(config);
  const deps: ContextDeps = {
    prisma: db.prisma,
    direct: db.direct,
    tenants: tenantClientsOf(db.prisma, db.direct, db.oneSnapshot),
    config,
    storage: createStorage(config),
  };
  const live = new LiveSubscriptions(db.prisma, config.liveSubscriptionsPerKey);
  const yoga = createGraphQLServer(schema, deps, live);
  // Connects the live hub now (its Redis subscriber), for /ready to wait for it.
  liveHub(config);
  const table = buildRouteTable(domains);
  const limits = new RateLimits(config);
  const rest = createRestHandler(schema, table, deps, limits);
  const singleConnection = graphqlSseSingleConnection({ getEnveloped: (context) => yoga.getEnveloped(context as never) as never, live });
  const sockets = graphqlWebSocket({
    getEnveloped: (context) => yoga.getEnveloped(context as never) as never,
    live,
    authenticate: (authorization, request) =>
      authenticateWithin(limits, { address: socketAddress(request, config.trustProxy) }, () =>
        authenticate(db.prisma, authorization, { adminToken: config.adminToken, direct: db.direct }),
      ),
  });
  let openApi: OpenApiDocument | undefined;
  const openApiDocument = () => (openApi ??= buildOpenApiDocument(schema, domains, { serverUrl: config.publicBaseUrl }));
  const reference = createApiReference(openApiDocument);
  // The webhook event schemas come from the REST layer's document (domains do not import it).
  let eventSchemas: ReturnType<typeof eventSchemasOf> | undefined;
  provideEventSchemas(() => (eventSchemas ??= eventSchemasOf(openApiDocument())));
  if (config.metricsToken) {
    enableMetrics();
    observeDatabase({ pool: db.poolStats && (() => db.poolStats!()), queues: () => queueStats(db.sql) });
  }

  async function route(request: Request, requestId: string, facts: RequestFacts): Promise<Response> {
    const { pathname } = new URL(request.url);
    // The route's template, for metrics: a fixed set of values whatever the paths requested.
    if (pathname === '/health' || pathname === '/ready' || pathname === '/graphql') facts.route = pathname;
    if (pathname === '/health') return Response.json({ status: 'ok' });
    if (pathname === METRICS_PATH && metricsAuthorized(request, config.metricsToken)) {
      facts.route = METRICS_PATH;
      return metricsResponse();
    }
    if (pathname === '/ready') {
      if (!liveReady(config)) return Response.json({ status: 'unavailable' }, { status: 503 });
      try {
        await db.sql.query('SELECT 1');
        return Response.json({ status: 'ready' });
      } catch {
        return Response.json({ status: 'unavailable' }, { status: 503 });
      }
    }
    if (pathname === '/graphql') return longBodyAsBytes(await graphql(request, requestId, facts));
    const document = reference(request);
    if (document) {
      facts.route = pathname.startsWith('/backend/docs') ? '/backend/docs' : pathname;
      return document;
    }
    return rest(request, requestId, facts);
  }

  async function graphql(request: Request, requestId: string, facts: RequestFacts): Promise<Response> {
    const wantsGraphiQL = request.method === 'GET' && (request.headers.get('accept') ?? '').includes('text/html');
    if (wantsGraphiQL) return yoga.fetch(request, { viewer: null, requestId });
    try {
      const login = () =>
        authenticate(db.prisma, request.headers.get('authorization'), { adminToken: config.adminToken, direct: db.direct });
      const viewer = await authenticateWithin(limits, (facts.limits ??= {}), login);
      noteViewer(facts, viewer);
      if (viewer.kind === 'user') activeOrganisations(config).seen(viewer.tenantId);
      const key = request.method === 'POST' && viewer.kind === 'user' ? idempotencyKeyOf(request) : null;
      if (isMultipartForm(request)) {
        if (key) throw multipartKeyRefused();
        // The request's files wait on disk while it runs, and are removed once it is answered.
        const spool = new FileSpool(config.uploadTempDir);
        try {
          return await yoga.fetch(request, { viewer, requestId, facts, spool });
        } finally {
          await spool.dispose();
        }
      }
      // Yoga's own Request class reads the buffered body as it is; a global one would stream it again.
      const bounded = await withBoundedBody(request, yoga.fetchAPI.Request);
      if (isSingleConnectionRequest(bounded)) {
        if (viewer.kind !== 'user') throw new AppError('FORBIDDEN', 'Assinaturas exigem uma chave de API de uma organização');
        return await singleConnection.handle(bounded, viewer, requestId);
      }
      // A mutation with an Idempotency-Key runs once per API key and key (http/idempotency.ts), and only
      // for a caller every selected root field admits; queries need none.
      const mutationFields = key && viewer.kind === 'user' ? await mutationFieldsOf(bounded.clone()) : null;
      if (key && viewer.kind === 'user' && mutationFields) {
        for (const field of mutationFields) {
          const access = accessOfField(schema, 'Mutation', field);
          if (access !== undefined) checkAccess(viewer, access);
        }
        return await runIdempotent(db.prisma, viewer, key, bounded, async (r) => yoga.fetch(r, { viewer, requestId, facts }));
      }
      return await yoga.fetch(bounded, { viewer, requestId, facts });
    } catch (e) {
      // GraphQL clients (GraphiQL among them) read errors from `errors`, also before Yoga runs.
      // Yoga rejects with the signal's reason once the client has gone (a file's upload left waiting).
      if (!(e instanceof AppError) && request.signal.aborted) return graphqlErrorResponse(clientGone());
      const { error, internal } = normalizeError(e);
      if (internal) throw e;
      return graphqlErrorResponse(error);
    }
  }

  async function handle(request: Request, requestId: string, client: ClientInfo): Promise<Response> {
    const started = performance.now();
    const { pathname } = new URL(request.url);
    const facts: RequestFacts = { limits: { address: clientAddress(request, client.address, config.trustProxy) } };
    let response: Response;
    try {
      response = (crossOrigin(pathname) && corsPreflight(request, config.corsOrigins)) || (await route(request, requestId, facts));
    } catch (e) {
      // What no route answered: a database or service that cannot be reached is still a 503.
      const { error, internal } = normalizeError(e);
      if (internal) log.error('unhandled error', { error: errorText(e) });
      response = errorResponse(table.styleOf(pathname), internal ? new AppError('INTERNAL', 'Erro interno do servidor') : error);
    }
    if (crossOrigin(pathname)) {
      response = withCors(request, response, config.corsOrigins);
      // The budget the request was counted against; without one (no key was needed, or none was
      // checked), what the client's address has left of its failed-authentication budget.
      const { address, state } = facts.limits!;
      setRateLimitHeaders(response.headers, state ?? (await limits.addressState(address)));
    }
    response.headers.set('x-request-id', requestId);
    const ms = performance.now() - started;
    observeRequest(facts.route, request.method, response.status, ms / 1000);
    // Probes come every few seconds from load balancers: logged only at debug.
    const level = pathname === '/health' || pathname === '/ready' ? 'debug' : 'info';
    const { limits: _limits, ...logged } = facts;
    log[level]('request', { method: request.method, path: pathname, status: response.status, ms: Math.round(ms), ...logged });
    return response;
  }

  const crossOrigin = (pathname: string) => pathname === '/graphql' || pathname === '/backend' || pathname.startsWith('/backend/');

  return {
    deps,
    styleOf: (pathname) => table.styleOf(pathname),
    close: () => {
      limits.close();
      live.close();
      sockets.close();
      singleConnection.close();
      closeLiveHub(config);
    },
    upgrade(request, socket, head) {
      if ((request.url ?? '/').split('?')[0] !== '/graphql') return false;
      sockets.upgrade(request, socket, head);
      return true;
    },
    endSockets: () => sockets.close(),
    live,
    fetch(request, client = {}) {
      // Every log line written while the request is handled carries its id (src/log.ts).
      const requestId = requestIdFrom(request.headers.get('x-request-id'));
      return runWithRequestId(requestId, () => handle(request, requestId, client));
    },
  };
}
