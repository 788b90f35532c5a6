// The application as one fetch handler: /graphql (Yoga), /backend (REST via sofa), /health, /ready.
// The Node server (http/server.ts) and the tests both drive this same handler.
import { randomUUID } from 'node:crypto';
import { authenticate } from './auth/authenticate.js';
import type { Config } from './config.js';
import type { Database } from './db/client.js';
import { TenantClients } from './db/tenant-scope.js';
import { AppError } from './errors.js';
import { createGraphQLServer } from './http/graphql.js';
import type { ContextDeps } from './http/context.js';
import { log } from './log.js';
import { errorResponse } from './rest/envelope.js';
import { BASE_PATH, createRestHandler } from './rest/handler.js';
import { restRoutes } from './rest/routes.js';
import { schema } from './schema/index.js';
import { readLimitedBody } from './rest/body.js';

/**
 * GraphQL bodies get the same 10 MB bound as REST, and are read before Yoga sees them, so that a body
 * arriving too late or cut by the client is answered as on REST (Yoga would call it invalid JSON).
 */
async function withBoundedBody(request: Request): Promise<Request> {
  if (!request.body) return request;
  const body = await readLimitedBody(request);
  return new Request(request.url, { method: request.method, headers: request.headers, body: Buffer.from(body) });
}

export interface App {
  fetch(request: Request): Promise<Response>;
  deps: ContextDeps;
}

export function createApp(config: Config, db: Database): App {
  const deps: ContextDeps = { prisma: db.prisma, tenants: new TenantClients(db.prisma), config };
  const yoga = createGraphQLServer(schema, deps);
  const rest = createRestHandler(schema, restRoutes, deps);

  async function route(request: Request, requestId: string): Promise<Response> {
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
    if (pathname === BASE_PATH || pathname.startsWith(BASE_PATH + '/')) return rest(request, requestId);
    if (pathname === '/graphql') {
      const wantsGraphiQL = request.method === 'GET' && (request.headers.get('accept') ?? '').includes('text/html');
      if (wantsGraphiQL) return yoga.fetch(request, { viewer: null, requestId });
      try {
        const viewer = await authenticate(db.prisma, request.headers.get('authorization'), { adminToken: config.adminToken });
        return await yoga.fetch(await withBoundedBody(request), { viewer, requestId });
      } catch (e) {
        if (e instanceof AppError) return errorResponse('envelope', e);
        throw e;
      }
    }
    return errorResponse('bare', new AppError('NOT_FOUND', 'Rota não encontrada'));
  }

  return {
    deps,
    async fetch(request) {
      const requestId = request.headers.get('x-request-id')?.slice(0, 100) || randomUUID();
      const started = performance.now();
      let response: Response;
      try {
        response = await route(request, requestId);
      } catch (e) {
        log.error('unhandled error', { requestId, error: String((e as Error)?.stack ?? e) });
        response = errorResponse('bare', new AppError('INTERNAL', 'Erro interno do servidor'));
      }
      response.headers.set('x-request-id', requestId);
      log.info('request', {
        requestId,
        method: request.method,
        path: new URL(request.url).pathname,
        status: response.status,
        ms: Math.round(performance.now() - started),
      });
      return response;
    },
  };
}
