// The application as one fetch handler: /graphql (Yoga), /backend and the media proxy (the route table,
// derived from the domains' manifests), its reference (/backend/openapi.json, /backend/docs), /health,
// /ready. The Node server (http/server.ts) and the tests drive this same handler.
import { randomUUID } from 'node:crypto';
import { authenticate } from './auth/authenticate.js';
import type { Config } from './config.js';
import type { ContextDeps } from './context/context.js';
import type { Database } from './db/client.js';
import { TenantClients } from './db/tenant-scope.js';
import { domains, schema } from './domains/index.js';
import type { ResponseStyle } from './domains/manifest.js';
import { AppError } from './errors.js';
import { readLimitedBody } from './http/body.js';
import { createApiReference } from './http/api-reference.js';
import { corsPreflight, withCors } from './http/cors.js';
import { createGraphQLServer, isMutationRequest } from './http/graphql.js';
import { idempotencyKeyOf, multipartKeyRefused, runIdempotent } from './http/idempotency.js';
import { noteViewer, type RequestFacts } from './http/request-facts.js';
import { errorResponse, graphqlErrorResponse } from './http/responses.js';
import { log } from './log.js';
import { createRestHandler } from './rest/handler.js';
import { buildOpenApiDocument, type OpenApiDocument } from './rest/openapi/document.js';
import { eventSchemasOf } from './rest/openapi/webhooks.js';
import { provideEventSchemas } from './domains/webhooks/event-types.js';
import { buildRouteTable } from './rest/route-table.js';
import { FileSpool } from './storage/file-spool.js';
import { isMultipartForm } from './storage/multipart-form.js';
import { createDirectoryStorage } from './storage/storage.js';

/**
 * GraphQL bodies get the same 10 MB bound as REST, and are read before Yoga sees them, so that a body
 * arriving too late or cut by the client is answered as on REST (Yoga would call it invalid JSON).
 * Multipart bodies are not: their reader (http/graphql-multipart.ts) streams them under the same bound.
 */
async function withBoundedBody(request: Request, RequestClass: typeof Request): Promise<Request> {
  if (!request.body) return request;
  const body = await readLimitedBody(request);
  return new RequestClass(request.url, { method: request.method, headers: request.headers, body: Buffer.from(body) });
}

export interface App {
  fetch(request: Request): Promise<Response>;
  /** The error style of a path before any route matched it (answers the Node server gives itself). */
  styleOf(pathname: string): ResponseStyle;
  deps: ContextDeps;
}

export function createApp(config: Config, db: Database): App {
  const deps: ContextDeps = {
    prisma: db.prisma,
    direct: db.direct,
    tenants: new TenantClients(db.prisma, db.direct),
    config,
    storage: createDirectoryStorage(config.storageDir),
  };
  const yoga = createGraphQLServer(schema, deps);
  const table = buildRouteTable(domains);
  const rest = createRestHandler(schema, table, deps);
  let openApi: OpenApiDocument | undefined;
  const openApiDocument = () => (openApi ??= buildOpenApiDocument(schema, domains));
  const reference = createApiReference(openApiDocument);
  // The webhook event schemas come from the REST layer's document (domains do not import it).
  let eventSchemas: ReturnType<typeof eventSchemasOf> | undefined;
  provideEventSchemas(() => (eventSchemas ??= eventSchemasOf(openApiDocument())));

  async function route(request: Request, requestId: string, facts: RequestFacts): Promise<Response> {
    const { pathname } = new URL(request.url);
    if (pathname === '/health') return Response.json({ status: 'ok' });
    if (pathname === '/ready') {
      try {
        await db.sql.query('SELECT 1');
        return Response.json({ status: 'ready' });
      } catch {
        return Response.json({ status: 'unavailable' }, { status: 503 });
      }
    }
    if (pathname === '/graphql') {
      const wantsGraphiQL = request.method === 'GET' && (request.headers.get('accept') ?? '').includes('text/html');
      if (wantsGraphiQL) return yoga.fetch(request, { viewer: null, requestId });
      try {
        const viewer = await authenticate(db.prisma, request.headers.get('authorization'), { adminToken: config.adminToken, direct: db.direct });
        noteViewer(facts, viewer);
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
        // A mutation with an Idempotency-Key runs once per key (http/idempotency.ts); queries need none.
        if (key && viewer.kind === 'user' && (await isMutationRequest(bounded.clone()))) {
          return await runIdempotent(db.prisma, viewer.tenantId, key, bounded, async (r) => yoga.fetch(r, { viewer, requestId, facts }));
        }
        return await yoga.fetch(bounded, { viewer, requestId, facts });
      } catch (e) {
        // GraphQL clients (GraphiQL among them) read errors from `errors`, also before Yoga runs.
        if (e instanceof AppError) return graphqlErrorResponse(e);
        throw e;
      }
    }
    return reference(request) ?? rest(request, requestId, facts);
  }

  const crossOrigin = (pathname: string) => pathname === '/graphql' || pathname === '/backend' || pathname.startsWith('/backend/');

  return {
    deps,
    styleOf: table.styleOf,
    async fetch(request) {
      const requestId = request.headers.get('x-request-id')?.slice(0, 100) || randomUUID();
      const started = performance.now();
      const { pathname } = new URL(request.url);
      const facts: RequestFacts = {};
      let response: Response;
      try {
        response = (crossOrigin(pathname) && corsPreflight(request, config.corsOrigins)) || (await route(request, requestId, facts));
      } catch (e) {
        log.error('unhandled error', { requestId, error: String((e as Error)?.stack ?? e) });
        response = errorResponse('bare', new AppError('INTERNAL', 'Erro interno do servidor'));
      }
      if (crossOrigin(pathname)) response = withCors(request, response, config.corsOrigins);
      response.headers.set('x-request-id', requestId);
      // Probes come every few seconds from load balancers: logged only at debug.
      const level = pathname === '/health' || pathname === '/ready' ? 'debug' : 'info';
      log[level]('request', { requestId, method: request.method, path: pathname, status: response.status, ms: Math.round(performance.now() - started), ...facts });
      return response;
    },
  };
}
