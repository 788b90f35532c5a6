// Every REST answer the suite receives is checked against the live OpenAPI document: the route's
// documented response for that status (success and errors alike) must exist and its schema must accept
// the body. A mismatch throws, failing the test that made the call. The published answers are open to
// keys added later; the suite holds the server to exactly the documented keys (closedAnswers).
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { domains } from '../../src/domains/index.js';
import { buildRouteTable } from '../../src/rest/route-table.js';
import { openApiPath } from '../../src/rest/openapi/document.js';
import { errorBody } from '../../src/rest/openapi/errors.js';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;
const table = buildRouteTable(domains);

interface ResponseObject {
  $ref?: string;
  content?: Record<string, { schema?: unknown }>;
}

type Document = {
  paths: Record<string, Record<string, { responses: Record<string, ResponseObject> }>>;
  components: { responses: Record<string, ResponseObject> };
};

/**
 * A copy of the document whose answer objects accept no key beyond their properties: those that list
 * every property as required (what GraphQL answers and the handlers' records look like). Error bodies
 * (components.responses) stay open: some errors carry more fields.
 */
function closedAnswers(document: Document): Document {
  const copy = structuredClone(document) as Document & { components: { schemas?: Record<string, unknown> } };
  const close = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(close);
    if (!node || typeof node !== 'object') return;
    const schema = node as Record<string, unknown>;
    const properties = schema.properties as Record<string, unknown> | undefined;
    const required = schema.required as string[] | undefined;
    if (properties && required && schema.additionalProperties === undefined && Object.keys(properties).every((k) => required.includes(k)))
      schema.additionalProperties = false;
    Object.values(schema).forEach(close);
  };
  close(copy.paths);
  close(copy.components.schemas);
  return copy;
}

/** Escapes one JSON pointer segment. */
const pointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

export class OpenApiCheck {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();

  private readonly document: Document;

  constructor(published: Document) {
    addFormats(this.ajv);
    this.ajv.addFormat('binary', true);
    this.document = closedAnswers(published);
    this.ajv.addSchema(this.document as object, 'openapi');
  }

  /** Throws unless `value` is valid against the schema at `location` (a JSON pointer into the document, `#/…`). */
  assertMatches(location: string, value: unknown, where = location): void {
    this.assertValid(this.validator(location, { $ref: `openapi${location}` }), value, where);
  }

  private validator(key: string, schema: object): ValidateFunction {
    let validate = this.validators.get(key);
    if (!validate) this.validators.set(key, (validate = this.ajv.compile(schema)));
    return validate;
  }

  /** Throws when `body` is not what the document promises for this call and status. */
  check(method: string, pathname: string, status: number, body: unknown): void {
    if (method === 'HEAD' || pathname === '/backend/openapi.json' || pathname.startsWith('/backend/docs')) return;
    const where = `${method} ${pathname} → ${status}`;
    const { compiled } = table.match(method, pathname);
    if (!compiled) {
      // No route: the 404 of the path's area.
      if (status !== 404) throw new Error(`OpenAPI: ${where}: no route matches, yet the answer is not 404`);
      return this.assertValid(this.validator(`unrouted ${table.styleOf(pathname)}`, errorBody(table.styleOf(pathname), 404)), body, where);
    }
    const path = openApiPath(compiled);
    const operation = this.document.paths[path]?.[method.toLowerCase()];
    if (!operation) throw new Error(`OpenAPI: ${where}: ${method} ${path} is not documented`);
    let response = operation.responses[String(status)];
    let location = `#/paths/${pointer(path)}/${method.toLowerCase()}/responses/${status}`;
    if (!response)
      throw new Error(`OpenAPI: ${where}: status ${status} is not documented (documented: ${Object.keys(operation.responses).join(', ')})`);
    if (response.$ref) {
      location = response.$ref;
      response = this.document.components.responses[response.$ref.split('/').pop()!];
    }
    const media = response.content?.['application/json'];
    if (!media) {
      if (body !== undefined) throw new Error(`OpenAPI: ${where}: documented without a body, answered ${JSON.stringify(body)}`);
      return;
    }
    this.assertValid(this.validator(location, { $ref: `openapi${location}/content/application~1json/schema` }), body, where);
  }

  /**
   * Checks an answer as a client received it: a JSON body as `check` does; any other body must be one of
   * the media types documented for that status (a file from the media proxy), an empty one none.
   */
  async checkResponse(request: Request, response: Response): Promise<void> {
    const { pathname } = new URL(request.url);
    const type = response.headers.get('content-type') ?? '';
    const text = type.includes('application/json') ? await response.clone().text() : undefined;
    if (text !== undefined || response.status === 204)
      return this.check(request.method, pathname, response.status, text ? JSON.parse(text) : undefined);
    const where = `${request.method} ${pathname} → ${response.status}`;
    const { compiled } = table.match(request.method, pathname);
    const operation = compiled && this.document.paths[openApiPath(compiled)]?.[request.method.toLowerCase()];
    const documented = operation?.responses[String(response.status)];
    if (!documented || documented.$ref) throw new Error(`OpenAPI: ${where} (${type}): no such answer is documented`);
    const media = Object.keys(documented.content ?? {});
    const bytes = (await response.clone().arrayBuffer()).byteLength;
    if (!bytes) {
      if (media.length) throw new Error(`OpenAPI: ${where}: documented with a body (${media.join(', ')}), answered none`);
      return;
    }
    const essence = type.split(';')[0].trim();
    if (!media.some((m) => m === '*/*' || m === essence || (m.endsWith('/*') && essence.startsWith(m.slice(0, -1)))))
      throw new Error(`OpenAPI: ${where}: ${essence} is not documented (documented: ${media.join(', ') || 'no body'})`);
  }

  private assertValid(validate: ValidateFunction, body: unknown, where: string) {
    if (validate(body)) return;
    const problems = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
    throw new Error(
      `OpenAPI: ${where}: the answer does not match its documented schema:\n  ${problems.join('\n  ')}\nbody: ${JSON.stringify(body).slice(0, 1000)}`,
    );
  }
}
