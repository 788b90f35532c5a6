// The REST dispatcher under /backend: matches the route table, authenticates, reads the body (JSON or
// multipart, size-limited), lets sofa run the route's root field, then dresses the answer in the
// route's style. Unknown paths answer 404 in the shape of their area.
import type { GraphQLSchema } from 'graphql';
import { authenticate } from '../auth/authenticate.js';
import type { Viewer } from '../auth/viewer.js';
import { AppError, normalizeError } from '../errors.js';
import { createContext, type ContextDeps } from '../http/context.js';
import { log } from '../log.js';
import { readLimitedBody } from './body.js';
import { errorResponse, successResponse } from './envelope.js';
import { parseMultipart } from './multipart.js';
import type { ResponseStyle, RestRoute } from './route-table.js';
import { createSofaRouter, restSchema } from './sofa.js';

export const BASE_PATH = '/backend';

/** Areas whose endpoints use the {success, data} envelope (decisions.md). */
const ENVELOPE_AREAS = ['leads', 'lead-statuses', 'tags', 'conversations', 'messages', 'channels', 'webhooks', 'users', 'api-keys', 'admin'];

/** The response style of a path below /backend, for answers given before a route is known. */
function styleOfPath(path: string): ResponseStyle {
  const area = path.split('/')[1] ?? '';
  return ENVELOPE_AREAS.includes(area) ? 'envelope' : 'bare';
}

/** The same for a full request path: /backend areas by their style, everything else the envelope. */
export function styleOfRequestPath(pathname: string): ResponseStyle {
  return pathname.startsWith(BASE_PATH + '/') ? styleOfPath(pathname.slice(BASE_PATH.length)) : 'envelope';
}

interface CompiledRoute {
  route: RestRoute;
  pattern: RegExp;
  /** Literal segments count more than params, so /pipelines/reorder wins over /pipelines/:id. */
  specificity: number;
}

function compile(route: RestRoute): CompiledRoute {
  const segments = route.path.split('/').filter(Boolean);
  const source = segments.map((s) => (s.startsWith(':') ? '/[^/]+' : '/' + s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('');
  return { route, pattern: new RegExp(`^${source || '/'}/?$`), specificity: segments.filter((s) => !s.startsWith(':')).length };
}

export function createRestHandler(schema: GraphQLSchema, routes: RestRoute[], deps: ContextDeps) {
  const compiled = routes.map(compile).sort((a, b) => b.specificity - a.specificity);
  const sofa = createSofaRouter(restSchema(schema, routes), routes, BASE_PATH);

  function match(method: string, path: string) {
    const candidates = compiled.filter((c) => c.pattern.test(path));
    return { route: candidates.find((c) => c.route.method === method)?.route, pathExists: candidates.length > 0 };
  }

  return async function handleRest(request: Request, requestId: string): Promise<Response> {
    const url = new URL(request.url);
    const path = url.pathname.slice(BASE_PATH.length) || '/';
    if (request.method === 'GET' && (path === '/openapi.json' || path === '/docs' || path.startsWith('/docs/'))) {
      return sofa.fetch(request, {});
    }
    const { route, pathExists } = match(request.method, path);
    const style = route?.style ?? styleOfPath(path);
    try {
      if (!route) {
        if (pathExists) throw new AppError('NOT_FOUND', `Método ${request.method} não suportado em ${path}`);
        throw new AppError('NOT_FOUND', 'Rota não encontrada');
      }
      if (route.admin && !deps.config.adminToken) throw new AppError('NOT_FOUND', 'Rota não encontrada');
      const viewer: Viewer = await authenticate(deps.prisma, request.headers.get('authorization'), { adminToken: deps.config.adminToken });

      let body: string | undefined;
      let files: Map<string, File> | undefined;
      let nullKeys: string[] = [];
      if (request.method === 'POST' || request.method === 'PUT') {
        const bytes = await readLimitedBody(request);
        const contentType = request.headers.get('content-type') ?? '';
        if (contentType.startsWith('multipart/form-data')) {
          const form = await parseMultipart(bytes, contentType);
          body = JSON.stringify(form.body);
          files = form.files;
        } else if (bytes.byteLength > 0) {
          body = Buffer.from(bytes).toString('utf8');
          const parsed = parseJsonObject(body);
          if (!parsed) throw new AppError('INVALID_INPUT', 'O corpo da requisição deve ser um objeto JSON');
          nullKeys = Object.keys(parsed).filter((k) => parsed[k] === null);
        }
      }

      const inner = new Request(url, { method: request.method, headers: { 'content-type': 'application/json' }, body });
      const response = await sofa.fetch(inner, {
        buildContext: () => ({ ...createContext(deps, { viewer, requestId, files }), restNullKeys: nullKeys }),
      });
      const text = await response.text();
      if (response.ok) return successResponse(route, text);
      const neutral = JSON.parse(text) as { kind?: AppError['kind']; message?: string; extra?: Record<string, unknown> };
      if (!neutral.kind) throw new AppError(response.status === 404 ? 'NOT_FOUND' : 'INVALID_INPUT', neutral.message ?? 'Requisição inválida');
      return errorResponse(style, new AppError(neutral.kind, neutral.message ?? '', neutral.extra));
    } catch (e) {
      const { error, internal } = normalizeError(e);
      if (internal) log.error('unhandled error', { requestId, error: String((internal as Error)?.stack ?? internal) });
      return errorResponse(style, error);
    }
  };
}

function parseJsonObject(text: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : null;
  } catch {
    return null;
  }
}
