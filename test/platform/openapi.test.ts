// The published OpenAPI document: valid, current (openapi.json and the generated client types are
// committed), generated from the route table (so every route is documented, handler routes too), and
// truthful: bodies, parameters, answer shapes, errors and security are the ones the server applies. A
// typed client (openapi-fetch) runs against the server. Every REST answer of the suite is also checked
// against the document by the test helper (test/helpers/openapi-check.ts).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { buildSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { domains, schema } from '../../src/domains/index.js';
import { defineDomain } from '../../src/domains/manifest.js';
import { OPENAPI_FILE, OPENAPI_TYPES_FILE, openApiTypes } from '../../src/print-openapi.js';
import { buildOpenApiDocument, LOCAL_SERVER_URL, openApiPath, type OpenApiDocument } from '../../src/rest/openapi/document.js';
import { buildRouteTable } from '../../src/rest/route-table.js';
import { useTestApp } from '../helpers/app.js';
import { OpenApiCheck } from '../helpers/openapi-check.js';
import { boardAfterAMove, funilClient, unknownDeal } from '../rest-client/client.js';
import { permissionsOf } from '../../src/auth/access.js';

const api = useTestApp();

async function liveDocument(): Promise<OpenApiDocument> {
  const r = await api.raw('/backend/openapi.json');
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toContain('application/json');
  return r.json();
}

type Json = Record<string, any>;
const operations = (doc: OpenApiDocument) =>
  Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op: op as Json })));
const resolve = (doc: Json, node: Json): Json =>
  node.$ref
    ? resolve(
        doc,
        node.$ref
          .slice(2)
          .split('/')
          .reduce((n: Json, k: string) => n[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc),
      )
    : node;
const successSchema = (doc: OpenApiDocument, path: string, method: string, status = '200') =>
  resolve(doc, doc.paths[path][method].responses[status] as Json).content['application/json'].schema;

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1 with no dangling reference (swagger-parser)', async () => {
    const doc = await liveDocument();
    expect(doc.openapi).toBe('3.1.0');
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    expect(refs.length).toBeGreaterThan(50);
    for (const scalar of ['UUID', 'DateTime', 'JSONObject', 'BinaryFile'])
      expect((doc.components as Json).schemas[scalar], scalar).toBeDefined();
    // Named like a DOM global, a component becomes a type that shadows it (@hey-api: `type File = Blob | File`).
    expect((doc.components as Json).schemas.File).toBeUndefined();
  });

  it('is the committed openapi.json, and openapi-typescript generates the committed client types (`npm run openapi:print`)', async () => {
    const doc = await liveDocument();
    const printed = JSON.parse(fs.readFileSync(OPENAPI_FILE, 'utf8'));
    // The one difference: a server names itself (PUBLIC_BASE_URL); the printed copy names a local one.
    expect(doc.servers).toEqual([{ url: api.config.publicBaseUrl, description: expect.any(String) }]);
    expect(printed.servers).toEqual([{ url: LOCAL_SERVER_URL, description: expect.any(String) }]);
    expect(printed).toEqual({ ...doc, servers: printed.servers });
    expect(fs.readFileSync(OPENAPI_TYPES_FILE, 'utf8')).toBe(await openApiTypes(printed));
  });

  it('is the same document however many times it is built in one process', async () => {
    // Each build adds examples to its own copy: a handler route's declared body was shared, so a second
    // build found its example already there and numbered every later example id differently.
    const first = structuredClone(buildOpenApiDocument(schema, domains));
    expect(buildOpenApiDocument(schema, domains)).toEqual(first);
  });

  it('documents every route of the table once, with operationId, summary, its domain as tag and its security', async () => {
    const doc = await liveDocument();
    const table = buildRouteTable(domains);
    const ops = operations(doc);
    expect(ops).toHaveLength(table.routes.length);
    expect(new Set(ops.map((o) => o.op.operationId)).size).toBe(ops.length);
    expect((doc.tags as Json[]).map((t) => t.name)).toEqual(domains.map((d) => d.name));
    for (const compiled of table.routes) {
      const { route, domain } = compiled;
      const path = openApiPath(compiled);
      const op = doc.paths[path]?.[route.method.toLowerCase()] as Json;
      expect(op, `${route.method} ${path}`).toBeDefined();
      if (route.field) expect(op.operationId).toBe(route.openapi?.operationId ?? route.field.split('.')[1]);
      expect(op.summary).toBe(route.summary);
      expect(op.tags).toEqual([domain]);
      if (route.access === 'platform') expect(op.security).toEqual([{ adminToken: [] }]);
      else if (route.access === 'public') expect(op.security).toEqual([]);
      else expect(op.security).toEqual([{ apiKey: [] }]);
      // What the operation needs, as declared in its manifest: machine-readable and in the description.
      expect(op['x-permissions'], `${route.method} ${path}`).toEqual(permissionsOf(route.access));
      for (const p of permissionsOf(route.access)) expect(op.description).toContain(`\`${p}\``);
    }
    expect(doc.security).toEqual([{ apiKey: [] }]);
    expect((doc.components as Json).securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('takes bodies as request bodies, and only documented query parameters as parameters', async () => {
    const doc = await liveDocument();
    for (const { path, method, op } of operations(doc)) {
      const query = (op.parameters ?? []).filter((p: Json) => p.in === 'query').map((p: Json) => p.name);
      if (method === 'post' || method === 'put') {
        // A write reads only its `query` list from the query string; everything else is the body.
        const declared =
          buildRouteTable(domains).routes.find((c) => c.route.method.toLowerCase() === method && path === openApiPath(c))!.route.query ??
          [];
        expect(query, `${method} ${path}`).toEqual(declared);
      }
      for (const p of op.parameters ?? []) if (p.in === 'path') expect(path).toContain(`{${p.name}}`);
    }
    const createLead = doc.paths['/backend/leads'].post as Json;
    // No query parameters: only the Idempotency-Key header every organisation's POST takes.
    expect(createLead.parameters).toEqual([expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false })]);
    expect(createLead.requestBody.content['application/json'].schema).toMatchObject({
      required: ['name', 'phone'],
      properties: { tag_ids: { type: ['array', 'null'] } },
    });
    const deleteStage = doc.paths['/backend/pipeline/stages/{id}'].delete as Json;
    expect(deleteStage.parameters.map((p: Json) => [p.name, p.in])).toEqual([
      ['id', 'path'],
      ['target_stage_id', 'query'],
    ]);
    expect(deleteStage.requestBody).toBeUndefined();
    const list = doc.paths['/backend/pipelines/{id}/deals'].get as Json;
    expect(list.parameters.find((p: Json) => p.name === 'limit')).toMatchObject({
      in: 'query',
      required: false,
      schema: { type: 'integer' },
    });
    expect(list.parameters.find((p: Json) => p.name === 'sort').schema).toEqual({ $ref: '#/components/schemas/DealSort' });
  });

  it('documents each route’s real answer: envelope, spread, bare, 201, 204 without a body, nullable fields', async () => {
    const doc = await liveDocument();
    expect(successSchema(doc, '/backend/leads/{id}', 'get')).toMatchObject({
      properties: { success: { const: true }, data: { $ref: '#/components/schemas/Lead' } },
      required: ['success', 'data'],
    });
    expect(successSchema(doc, '/backend/leads', 'get')).toMatchObject({
      properties: { success: {}, data: { type: 'array' }, pagination: {} },
      required: ['success', 'data', 'pagination'],
    });
    expect(successSchema(doc, '/backend/tags', 'post', '201').properties.data).toEqual({ $ref: '#/components/schemas/Tag' });
    expect(doc.paths['/backend/tags'].post.responses['200']).toBeUndefined();
    expect(successSchema(doc, '/backend/leads/{id}', 'delete')).toEqual({ $ref: '#/components/schemas/Success' });
    expect(successSchema(doc, '/backend/pipeline/deals/{id}', 'get')).toEqual({ $ref: '#/components/schemas/Deal' });
    expect(successSchema(doc, '/backend/pipeline/deals', 'post', '201')).toEqual({ $ref: '#/components/schemas/Deal' });
    expect(successSchema(doc, '/backend/admin/tenants', 'post', '201')).toEqual({ $ref: '#/components/schemas/CreatedTenant' });
    expect(doc.paths['/backend/api-keys/{id}'].delete.responses['204']).toEqual({ description: 'Done; no body.' });
    const deal = (doc.components as Json).schemas.Deal;
    expect(deal.properties.won_at).toMatchObject({ anyOf: [{ $ref: '#/components/schemas/DateTime' }, { type: 'null' }] });
    expect(deal.properties.note.type).toEqual(['string', 'null']);
    expect(deal.properties.number).toMatchObject({ type: 'integer' });
    expect(deal.required).toContain('won_at');
    // Graph-only fields are not in REST answers.
    expect(deal.properties.lead).toBeUndefined();
    expect((doc.components as Json).schemas.Pipeline.properties.group).toBeUndefined();
    // A synced plain-array list names its next page in the X-Next-Cursor header; a paginated one in its body.
    for (const path of ['/backend/tags', '/backend/pipeline/products', '/backend/knowledge', '/backend/templates']) {
      expect((doc.paths[path].get.responses['200'] as Json).headers?.['X-Next-Cursor']?.schema, path).toEqual({ type: 'string' });
    }
    expect((doc.paths['/backend/leads'].get.responses['200'] as Json).headers).toBeUndefined();
  });

  it('documents every error in its route’s style with its codes; 401 is always the envelope', async () => {
    const doc = await liveDocument();
    const responses = (doc.components as Json).responses;
    const codes = (name: string) => {
      const body = responses[name].content['application/json'].schema;
      return (body.properties.error ?? body).properties.code.enum;
    };
    expect(codes('Unauthorized')).toEqual(['UNAUTHORIZED']);
    expect(codes('BareError404')).toEqual(['ERR_NOT_FOUND']);
    expect(codes('EnvelopeError404')).toEqual(['NOT_FOUND']);
    expect(codes('EnvelopeError409')).toEqual(['CONFLICT', 'ALREADY_EXISTS']);
    expect(codes('BareError413')).toEqual(['ERR_PAYLOAD_TOO_LARGE']);
    for (const { path, method, op } of operations(doc)) {
      const statuses = Object.keys(op.responses);
      const platform = op.security?.[0]?.adminToken;
      // Public routes (no security) take no key; the rest answer a missing key with the envelope 401.
      const open = Array.isArray(op.security) && op.security.length === 0;
      if (platform) expect(statuses).not.toContain('401');
      else if (!open) expect(op.responses['401'], `${method} ${path}`).toEqual({ $ref: '#/components/responses/Unauthorized' });
      expect(statuses, `${method} ${path}`).toContain('500');
      if (method === 'post' || method === 'put') expect(statuses).toEqual(expect.arrayContaining(['400', '413']));
      if (path.includes('{')) expect(statuses).toContain('404');
      const style =
        path.startsWith('/backend/leads') || path.startsWith('/backend/tags')
          ? 'Envelope'
          : path.startsWith('/backend/pipeline')
            ? 'Bare'
            : null;
      if (style)
        for (const s of statuses.filter((s) => s >= '400' && s !== '401'))
          expect(op.responses[s].$ref, `${method} ${path} ${s}`).toMatch(new RegExp(`/${style}Error${s}$`));
    }
    expect(doc.paths['/backend/admin/tenants'].post.responses['404']).toEqual({ $ref: '#/components/responses/EnvelopeError404Platform' });
  });

  it('documents handler routes and File arguments from the route table, with no special case', async () => {
    const schema = buildSchema(`
      scalar UUID
      scalar File
      type Upload { id: UUID! name: String! size: Int caption: String }
      type Query { upload(id: UUID!): Upload! }
      type Mutation { upload(file: File!, caption: String, tags: [String!]): Upload! }
    `);
    const uploads = defineDomain({
      name: 'uploads',
      routes: [
        {
          method: 'POST',
          path: '/uploads',
          field: 'Mutation.upload',
          style: 'bare',
          status: 201,
          access: 'member',
          summary: 'Upload a file',
        },
        {
          method: 'GET',
          path: '/media/proxy/*',
          absolute: true,
          style: 'bare',
          access: 'public',
          summary: 'A stored file',
          handler: async () => new Response(),
          openapi: {
            responses: {
              200: { description: 'The file', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
              304: { description: 'Not modified' },
            },
          },
        },
        {
          method: 'POST',
          path: '/uploads/cleanup',
          style: 'bare',
          access: 'admin',
          handler: async () => ({ deleted_count: 0 }),
          openapi: { operationId: 'cleanupUploads', result: { type: 'object', properties: { deleted_count: { type: 'integer' } } } },
        },
      ],
    });
    const doc = buildOpenApiDocument(schema, [uploads]);
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
    const upload = doc.paths['/backend/uploads'].post as Json;
    expect(Object.keys(upload.requestBody.content)).toEqual(['multipart/form-data']); // a required file cannot travel in JSON
    expect(upload.requestBody.content['multipart/form-data'].schema).toMatchObject({
      required: ['file'],
      properties: { file: { $ref: '#/components/schemas/BinaryFile' } },
    });
    expect((doc.components as Json).schemas.BinaryFile).toMatchObject({ type: 'string', format: 'binary' });
    const proxy = doc.paths['/media/proxy/{path}'].get as Json;
    expect(proxy).toMatchObject({ operationId: 'getMediaProxy', security: [], tags: ['uploads'] });
    expect(proxy.parameters).toEqual([expect.objectContaining({ name: 'path', in: 'path', required: true })]);
    expect(Object.keys(proxy.responses)).toEqual(['200', '304', '404', '500', '503']);
    expect(proxy.responses['401']).toBeUndefined();
    const cleanup = doc.paths['/backend/uploads/cleanup'].post as Json;
    expect(cleanup.operationId).toBe('cleanupUploads');
    expect(resolve(doc, cleanup.responses['200']).content['application/json'].schema).toEqual({
      type: 'object',
      properties: { deleted_count: { type: 'integer' } },
    });
  });
});

/** `redocly lint` (the CLI, with the repository's redocly.yaml: the recommended rules) on a document. */
async function redoclyLint(doc: OpenApiDocument): Promise<{ ruleId: string; severity: 'error' | 'warn'; message: string }[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'funil-redocly-'));
  const file = path.join(dir, 'openapi.json');
  fs.writeFileSync(file, JSON.stringify(doc, null, 2));
  try {
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['node_modules/@redocly/cli/bin/cli.js', 'lint', file, '--config', 'redocly.yaml', '--format', 'json'],
        // Nothing leaves the machine: no usage report, no update check.
        {
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', DO_NOT_TRACK: '1' },
          maxBuffer: 16 * 1024 * 1024,
        },
        // Exit 1 when there are errors: the report on stdout says which.
        (error, out) => (out.trim().startsWith('{') ? resolve(out) : reject(error ?? new Error(`redocly printed no report: ${out}`))),
      ),
    );
    return JSON.parse(stdout).problems;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Every operation of the paths and of the webhooks section. */
const allOperations = (doc: OpenApiDocument) => [
  ...operations(doc).map((o) => ({ ...o, base: `#/paths/${o.path.replace(/~/g, '~0').replace(/\//g, '~1')}/${o.method}` })),
  ...Object.entries((doc as Json).webhooks as Json).map(([name, item]) => ({
    path: name,
    method: 'post',
    op: item.post as Json,
    base: `#/webhooks/${name}/post`,
  })),
];

describe('a document generated clients can rely on', () => {
  it('has no error under Redocly’s recommended rules (`npx redocly lint`); its warnings are reported', async () => {
    const problems = await redoclyLint(await liveDocument());
    const warnings = problems.filter((p) => p.severity !== 'error');
    if (warnings.length)
      console.log(`redocly lint: ${warnings.length} warning(s):\n${warnings.map((w) => `  ${w.ruleId}: ${w.message}`).join('\n')}`);
    expect(problems.filter((p) => p.severity === 'error')).toEqual([]);
  });

  it('names this server, and every operation has an operationId, summary, tags, security and documented errors', async () => {
    const doc = await liveDocument();
    expect(doc.servers).toEqual([{ url: 'http://funil.test', description: expect.any(String) }]);
    for (const { path, method, op } of allOperations(doc)) {
      const where = `${method} ${path}`;
      expect(op.operationId, where).toMatch(/^[A-Za-z][A-Za-z0-9]*$/);
      expect(op.summary, where).toBeTruthy();
      expect(op.tags, where).toHaveLength(1);
      expect(Array.isArray(op.security), where).toBe(true);
      if (!path.startsWith('/')) continue; // a webhook: the consumer answers it
      expect(Object.keys(op.responses).filter((s) => s >= '400').length, where).toBeGreaterThan(1);
    }
    const tags = (doc.tags as Json[]).filter((t) => !t.description);
    expect(tags).toEqual([]);
  });

  it('has an example on every JSON and multipart body, request and answer, valid against its schema', async () => {
    const doc = await liveDocument();
    const check = new OpenApiCheck(doc as never);
    let count = 0;
    for (const { path, method, op, base } of allOperations(doc)) {
      const bodies: [string, Json][] = [];
      for (const [type, media] of Object.entries((op.requestBody?.content ?? {}) as Json))
        bodies.push([`${base}/requestBody/content/${type.replace('/', '~1')}`, media]);
      for (const [status, response] of Object.entries(op.responses as Json)) {
        const media = response.content?.['application/json'];
        if (media) bodies.push([`${base}/responses/${status}/content/application~1json`, media]);
      }
      for (const [location, media] of bodies) {
        expect(media.example, `${method} ${path}: ${location}`).toBeDefined();
        check.assertMatches(`${location}/schema`, media.example, `${method} ${path}: the example at ${location}`);
        count++;
      }
    }
    for (const [name, response] of Object.entries((doc.components as Json).responses as Json)) {
      const media = response.content['application/json'];
      check.assertMatches(`#/components/responses/${name}/content/application~1json/schema`, media.example, name);
    }
    expect(count).toBeGreaterThan(150);
    // The checker refuses an example that does not match.
    expect(() => check.assertMatches('#/components/schemas/Tag', { id: 'x' })).toThrow(/does not match/);
  });

  it('documents the upload as multipart with its fields and its real answer, and the media proxy as binary', async () => {
    const doc = await liveDocument();
    const upload = doc.paths['/backend/uploads'].post as Json;
    expect(Object.keys(upload.requestBody.content)).toEqual(['multipart/form-data']);
    const form = upload.requestBody.content['multipart/form-data'].schema;
    expect(Object.keys(form.properties)).toEqual(['file', 'type', 'folder']);
    expect(form.required).toEqual(['file']);
    expect(resolve(doc, form.properties.file)).toMatchObject({ type: 'string', format: 'binary' });
    expect(resolve(doc, form.properties.type.anyOf[0]).enum).toContain('media');
    expect(successSchema(doc, '/backend/uploads', 'post')).toEqual({ $ref: '#/components/schemas/Upload' });
    // Idempotency-Key is refused on multipart bodies: not offered where only multipart is taken.
    expect(upload.parameters).toBeUndefined();
    expect((doc.paths['/backend/messages/send-media'].post as Json).parameters).toBeUndefined();
    expect(Object.keys((doc.paths['/backend/knowledge'].post as Json).requestBody.content)).toEqual([
      'application/json',
      'multipart/form-data',
    ]);

    const proxy = doc.paths['/media/proxy/{path}'].get as Json;
    expect(proxy.parameters.map((p: Json) => `${p.in} ${p.name}`)).toEqual([
      'path path',
      'header Range',
      'header If-Range',
      'header If-None-Match',
      'header If-Modified-Since',
    ]);
    for (const status of ['200', '206']) {
      expect(Object.keys(proxy.responses[status].content)).toEqual(['*/*']);
      expect(proxy.responses[status].content['*/*'].schema).toMatchObject({ type: 'string', format: 'binary' });
      expect(Object.keys(proxy.responses[status].headers)).toEqual(
        expect.arrayContaining(['ETag', 'Last-Modified', 'Accept-Ranges', 'Content-Length']),
      );
    }
    expect(proxy.responses['206'].headers['Content-Range']).toBeDefined();
    expect(Object.keys(proxy.responses)).toEqual(['200', '206', '304', '404', '416', '500', '503']);
  });

  it('leaves answers open to new keys, and closes the input objects the server refuses unknown keys in', async () => {
    const doc = await liveDocument();
    const closed: string[] = [];
    const walk = (node: unknown, where: string): void => {
      if (!node || typeof node !== 'object') return;
      if ((node as Json).additionalProperties === false) closed.push(where);
      for (const [k, v] of Object.entries(node)) walk(v, `${where}/${k}`);
    };
    for (const { op, base } of allOperations(doc)) walk(op.responses, base);
    walk((doc.components as Json).responses, '#/components/responses');
    const components = (doc.components as Json).schemas as Json;
    const inputs = Object.keys(components).filter((name) => components[name].additionalProperties === false);
    for (const name of Object.keys(components)) if (!inputs.includes(name)) walk(components[name], name);
    expect(closed).toEqual([]);
    expect(inputs).toEqual(expect.arrayContaining(['DealProductInput', 'DealNewLeadInput']));
    // Input objects are in request bodies only.
    expect(JSON.stringify([...allOperations(doc).map((o) => o.op.responses), (doc.components as Json).responses])).not.toMatch(
      /DealProductInput|DealNewLeadInput/,
    );

    // The server does refuse an unknown key inside an input object.
    const org = await api.newOrg();
    const pipeline = await api.rest('POST', '/backend/pipelines', { key: org.key, body: { name: 'Vendas', new_group_name: 'Comercial' } });
    const lead = await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'Ana', phone: '+5511987650001' } });
    const body = {
      pipeline_id: pipeline.body.id,
      stage_id: pipeline.body.stages[0].id,
      lead_id: lead.body.data.id,
      products: [{ name: 'Plano', price: 10, qty: 1, discount: 5 }],
    };
    const refused = await api.rest('POST', '/backend/pipeline/deals', { key: org.key, body });
    expect(refused.status).toBe(400);
  });
});

describe('answers against the document', () => {
  it('the suite’s checker refuses a body that does not match, an undocumented status and a body where none is documented', async () => {
    const check = new OpenApiCheck((await liveDocument()) as never);
    const tag = {
      id: '6f1c1a43-2d0e-4c3b-9e0a-1b2c3d4e5f60',
      name: 'x',
      color: '#fff',
      created_at: new Date().toISOString(),
      updated_at: new Date().toISOString(),
    };
    expect(() => check.check('POST', '/backend/tags', 201, { success: true, data: tag })).not.toThrow();
    expect(() => check.check('POST', '/backend/tags', 201, tag)).toThrow(/does not match/);
    expect(() => check.check('POST', '/backend/tags', 201, { success: true, data: { ...tag, id: 'not-a-uuid' } })).toThrow(
      /does not match/,
    );
    expect(() => check.check('POST', '/backend/tags', 200, { success: true, data: tag })).toThrow(/not documented/);
    expect(() => check.check('GET', '/backend/pipeline/deals/x', 404, { code: 'NOT_FOUND', message: 'x' })).toThrow(/does not match/);
    expect(() => check.check('GET', '/backend/pipeline/deals/x', 404, { code: 'ERR_NOT_FOUND', message: 'x' })).not.toThrow();
    expect(() => check.check('DELETE', '/backend/api-keys/x', 204, { success: true })).toThrow(/without a body/);
    // The document lets answers grow; the suite holds the server to exactly the documented keys.
    expect(() => check.check('POST', '/backend/tags', 201, { success: true, data: { ...tag, surprise: 1 } })).toThrow(/does not match/);
  });

  it('a typed client (openapi-typescript + openapi-fetch) creates, moves and reads the board', async () => {
    const org = await api.newOrg();
    const client = funilClient('http://funil.test', org.key, (request) => api.app.fetch(request));
    const result = await boardAfterAMove(client);
    expect(result.dealNumber).toBe(1);
    expect(result.columns).toEqual([
      { stage: 'Entrada', deals: 0, total: 0 },
      { stage: 'Em andamento', deals: 1, total: 1500 },
      { stage: 'Ganho', deals: 0, total: 0 },
      { stage: 'Perdido', deals: 0, total: 0 },
    ]);
    expect(await unknownDeal(client, '00000000-0000-4000-8000-000000000000')).toEqual({
      status: 404,
      code: 'ERR_NOT_FOUND',
      data: undefined,
    });
    expect(
      await unknownDeal(
        funilClient('http://funil.test', 'fnl_wrong', (r) => api.app.fetch(r)),
        '00000000-0000-4000-8000-000000000000',
      ),
    ).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
  });
});
