// The REST dispatcher: matches the route table (derived from the domains' manifests), authenticates,
// reads the body (JSON or multipart, size-limited), builds the field's variables strictly and runs the
// operation sofa derives for the route's root field (rest/sofa.ts), once: no second routing pass, one
// context, and the first error thrown straight to answer(), normalised once there. Or it calls a
// handler route. Then it dresses the answer in the route's style. Unknown paths answer 404 in the shape
// of their area.
import type { GraphQLSchema } from 'graphql';
import { checkAccess } from '../auth/access.js';
import { authenticate } from '../auth/authenticate.js';
import type { TenantViewer, Viewer } from '../auth/viewer.js';
import { createContext, type ContextDeps } from '../context/context.js';
import type { FieldRoute, RouteSpec } from '../domains/manifest.js';
import { AppError, normalizeError } from '../errors.js';
import { log, errorText } from '../log.js';
import { traced, tracingEnabled } from '../observability/tracing.js';
import { executionAttributes } from '../http/graphql-tracing.js';
import { assertCleanInput } from '../schema/clean-input.js';
import { readLimitedBody } from '../http/body.js';
import { answerTooLarge, jsonLongerThan, MAX_ANSWER_BYTES } from '../http/graphql-size.js';
import { idempotencyKeyOf, runIdempotent } from '../http/idempotency.js';
import { FileSpool } from '../storage/file-spool.js';
import { isMultipartForm } from '../storage/multipart-form.js';
import { noteViewer, type RequestFacts } from '../http/request-facts.js';
import { activeOrganisations } from '../http/active-organisations.js';
import { authenticateWithin, type RateLimits } from '../http/rate-limit.js';
import { errorResponse, isResponse, successResponse, type ResponseStyle } from '../http/responses.js';
import { readRestForm } from './multipart.js';
import { operationIdOf } from './openapi/document.js';
import { BASE_PATH, type RouteTable } from './route-table.js';
import { checkPathParams, compileRestField, executeRestField, restSchema, type RestField } from './sofa.js';
import { planJsonOperation } from '../schema/json-fields.js';
import { nextCursorOf } from '../context/next-cursor.js';
import { restVariables, type RestInput } from './variables.js';

const notFoundRoute = () => new AppError('NOT_FOUND', 'Rota não encontrada');

export function createRestHandler(schema: GraphQLSchema, table: RouteTable, deps: ContextDeps, limits?: RateLimits) {
  const fieldRoutes = table.routes.map((c) => c.route).filter((r): r is FieldRoute => 'field' in r && !!r.field);
  const served = restSchema(schema, fieldRoutes);

  /** The operation sofa derives for a route, compiled on the route's first call. */
  const compiled = new Map<FieldRoute, RestField>();
  const fieldOf = (route: FieldRoute) => {
    let field = compiled.get(route);
    if (!field) compiled.set(route, (field = compileRestField(served, route)));
    return field;
  };

  function fieldArgs(route: FieldRoute) {
    const [root, name] = route.field.split('.');
    const type = root === 'Query' ? schema.getQueryType() : schema.getMutationType();
    return type!.getFields()[name].args;
  }

  /** Query parameters a route documents: every argument of a GET; a write's own `query` list. */
  function documentedQuery(route: RouteSpec, url: URL): Map<string, string[]> {
    const allowed = route.method === 'GET' ? null : new Set(route.query ?? []);
    const query = new Map<string, string[]>();
    for (const [k, v] of url.searchParams) {
      if (allowed && !allowed.has(k)) continue;
      query.set(k, [...(query.get(k) ?? []), v]);
    }
    return query;
  }

  /** The route's input; a multipart form's files are spooled in `spool`, which the caller disposes of. */
  async function readInput(
    request: Request,
    route: FieldRoute,
    url: URL,
    params: Record<string, string>,
    spool: FileSpool,
  ): Promise<RestInput> {
    const input: RestInput = { params, query: documentedQuery(route, url) };
    if (request.method !== 'POST' && request.method !== 'PUT') return input;
    if (isMultipartForm(request)) {
      const form = await readRestForm(request, spool);
      input.form = form.fields;
      input.files = form.files;
      return input;
    }
    const bytes = await readLimitedBody(request);
    if (bytes.byteLength > 0) {
      const parsed = parseJsonObject(Buffer.from(bytes).toString('utf8'));
      if (!parsed) throw new AppError('INVALID_INPUT', 'O corpo da requisição deve ser um objeto JSON');
      input.json = parsed;
    }
    return input;
  }

  /** Runs the route's field: its answer's JSON text. */
  async function callField(
    route: FieldRoute,
    request: Request,
    url: URL,
    params: Record<string, string>,
    viewer: Viewer,
    requestId: string,
    spool: FileSpool,
  ) {
    const input = await readInput(request, route, url, params, spool);
    const variables = restVariables(fieldArgs(route), input);
    assertCleanInput(variables);
    const context = createContext(deps, { viewer, requestId, signal: request.signal });
    const field = fieldOf(route);
    // A field served as JSON text (the deals list) answers with PostgreSQL's text as it comes; variables
    // the schema refuses go to graphql-js, which answers with the usual error.
    const json = route.method === 'GET' ? planJsonOperation(served, field.document, undefined, variables) : null;
    if (json) {
      const run = () => json[0].run(context);
      const text = tracingEnabled()
        ? await traced('graphql.execute', executionAttributes(field.document, undefined, 'rest'), run)
        : await run();
      if (Buffer.byteLength(text) > MAX_ANSWER_BYTES) throw answerTooLarge();
      return { text, context };
    }
    // A HEAD on a GET route runs as the GET (the route table matches it there); the server sends no body.
    checkPathParams(served, field, params);
    return { text: await executeRestField(served, field, context, variables), context };
  }

  async function runField(
    route: FieldRoute,
    request: Request,
    url: URL,
    params: Record<string, string>,
    viewer: Viewer,
    requestId: string,
  ) {
    // The route's admission before a form is read (knowledge files: one upload per organisation at a time).
    const admitted =
      route.admission && viewer.kind === 'user' && isMultipartForm(request)
        ? await route.admission({ tenantId: viewer.tenantId, config: deps.config, signal: request.signal })
        : undefined;
    // A form's files wait on disk while the field runs and are removed once it has, whatever the outcome.
    const spool = new FileSpool(deps.config.uploadTempDir);
    const { text, context } = await callField(route, request, url, params, viewer, requestId, spool).finally(() => {
      admitted?.();
      return spool.dispose();
    });
    return withNextCursor(successResponse(route, text), nextCursorOf(context));
  }

  return async function handleRest(request: Request, requestId: string, facts: RequestFacts = {}): Promise<Response> {
    const response = await dispatch(request, requestId, facts);
    // A HEAD runs as its GET and answers the GET's status and headers without the body.
    return request.method === 'HEAD' && response.body
      ? new Response(null, { status: response.status, headers: response.headers })
      : response;
  };

  async function dispatch(request: Request, requestId: string, facts: RequestFacts): Promise<Response> {
    const url = new URL(request.url);
    const { compiled, params, allowed } = table.match(request.method, url.pathname);
    const style = compiled?.route.style ?? table.styleOf(url.pathname);
    try {
      const isAdminArea = url.pathname === `${BASE_PATH}/admin` || url.pathname.startsWith(`${BASE_PATH}/admin/`);
      let viewer: Viewer | null = null;
      const login = () =>
        authenticate(deps.prisma, request.headers.get('authorization'), { adminToken: deps.config.adminToken, direct: deps.direct });
      if (isAdminArea) {
        // The platform area is invisible without the admin token: every answer but a valid call is 404.
        const adminToken = deps.config.adminToken;
        if (!adminToken) throw notFoundRoute();
        const admin = () => authenticate(deps.prisma, request.headers.get('authorization'), { adminToken });
        viewer = limits
          ? await authenticateWithin(limits, (facts.limits ??= {}), admin, (v) => v.kind === 'admin', notFoundRoute)
          : await admin().catch(() => null);
        if (viewer?.kind !== 'admin' || !compiled) throw notFoundRoute();
      }
      if (!compiled && allowed.length) {
        const refusal = new AppError('METHOD_NOT_ALLOWED', `Método ${request.method} não suportado em ${url.pathname}`);
        return errorResponse(style, refusal, { allow: allowed.join(', ') });
      }
      if (!compiled) throw notFoundRoute();
      const route = compiled.route;
      facts.route = compiled.fullPath;
      if (route.access !== 'public' && !viewer)
        viewer = limits ? await authenticateWithin(limits, (facts.limits ??= {}), login) : await login();
      noteViewer(facts, viewer);
      if (viewer?.kind === 'user') activeOrganisations(deps.config).seen(viewer.tenantId);
      facts.operation = operationIdOf(route);
      const execute = (request: Request) =>
        answer(style, requestId, async () => {
          if (!route.handler) return runField(route, request, url, params, viewer!, requestId);
          // Field routes are checked by their root field (auth/access.ts); a handler is checked here.
          checkAccess(viewer, route.access);
          const result = await route.handler({
            request,
            url,
            params,
            ctx: createContext(deps, { viewer, requestId, signal: request.signal }),
          });
          if (isResponse(result)) return result;
          if (jsonLongerThan(result, MAX_ANSWER_BYTES)) throw answerTooLarge();
          return successResponse(route, JSON.stringify(result ?? null));
        });
      // A POST with an Idempotency-Key runs once per API key and key (http/idempotency.ts), and only
      // for a caller the route admits: its access is checked before any record is read.
      const key = request.method === 'POST' && viewer?.kind === 'user' ? idempotencyKeyOf(request) : null;
      if (!key) return await execute(request);
      const caller = viewer as TenantViewer;
      checkAccess(caller, route.access);
      return await runIdempotent(deps.prisma, caller, key, request, execute);
    } catch (e) {
      return answer(style, requestId, () => {
        throw e;
      });
    }
  }
}

/** A plain-array list's sync page names the next page in a header (the answer has no room for it). */
function withNextCursor(response: Response, next: string | null): Response {
  if (next) response.headers.set('X-Next-Cursor', next);
  return response;
}

/** The route's answer, errors included, in its style. */
async function answer(style: ResponseStyle, requestId: string, run: () => Promise<Response>): Promise<Response> {
  try {
    return await run();
  } catch (e) {
    const { error, internal } = normalizeError(e);
    if (internal) log.error('unhandled error', { requestId, error: errorText(internal) });
    return errorResponse(style, error);
  }
}

function parseJsonObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
