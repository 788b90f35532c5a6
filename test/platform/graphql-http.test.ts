// /graphql over HTTP: protocol errors with their own statuses (whatever the client accepts), errors
// before Yoga in GraphQL's shape, GraphiQL from a local package, and request log lines that say who
// called and what ran.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { setLogLevel } from '../../src/log.js';
import { useTestApp } from '../helpers/app.js';

const api = useTestApp();

const post = (key: string | null, body: string, accept = 'application/json') =>
  api.raw('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body,
  });

describe('protocol errors', () => {
  it('a mutation over GET is 405 with Allow: POST, and nothing is written', async () => {
    const org = await api.newOrg();
    const query = encodeURIComponent('mutation { createTag(name: "via-get", color: "#111111") { id } }');
    for (const accept of ['application/json', 'application/graphql-response+json']) {
      const r = await api.raw(`/graphql?query=${query}`, { headers: { authorization: `Bearer ${org.key}`, accept } });
      expect(r.status, accept).toBe(405);
      expect(r.headers.get('allow')).toBe('POST');
      expect((await r.json()).errors[0].extensions).toEqual({ code: 'METHOD_NOT_ALLOWED', status: 405 });
    }
    expect((await api.rest('GET', '/backend/tags', { key: org.key })).body.data).toEqual([]);
    // A query over GET is fine.
    const read = await api.raw(`/graphql?query=${encodeURIComponent('{ tags { id } }')}`, {
      headers: { authorization: `Bearer ${org.key}`, accept: 'application/json' },
    });
    expect(read.status).toBe(200);
  });

  // PUT and DELETE are graphql-sse's single connection mode (test/platform/live-websocket.test.ts).
  it('a method other than GET, POST, PUT and DELETE is 405', async () => {
    const org = await api.newOrg();
    const r = await api.raw('/graphql', {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
      body: JSON.stringify({ query: '{ tags { id } }' }),
    });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toContain('POST');
  });

  it('invalid requests are 400 with INVALID_INPUT, also for Accept: application/json clients', async () => {
    const org = await api.newOrg();
    const cases: Record<string, string> = {
      'a batch (array body)': JSON.stringify([{ query: '{ tags { id } }' }, { query: '{ leadStatuses { id } }' }]),
      'invalid JSON': '{"query": ',
      'no query': JSON.stringify({ variables: {} }),
      'a syntax error': JSON.stringify({ query: '{ tags { id }' }),
      'an unknown field': JSON.stringify({ query: '{ nope }' }),
      'a wrong argument type': JSON.stringify({ query: '{ lead(id: 3) { id } }' }),
      'bad variables': JSON.stringify({ query: 'query($id: UUID!) { lead(id: $id) { id } }', variables: { id: 3 } }),
    };
    for (const [name, body] of Object.entries(cases)) {
      for (const accept of ['application/json', 'application/graphql-response+json']) {
        const r = await post(org.key, body, accept);
        expect(r.status, `${name} (${accept})`).toBe(400);
        const json = await r.json();
        expect(json.data, name).toBeUndefined();
        // A refused variable or argument literal is named (decisions.md: `extensions.details`).
        const details =
          name === 'bad variables' || name === 'a wrong argument type' ? { details: [{ field: 'id', message: expect.any(String) }] } : {};
        expect(json.errors[0].extensions, name).toEqual({ code: 'INVALID_INPUT', status: 400, ...details });
      }
    }
  });

  it('answers a 401 before Yoga in GraphQL’s error shape, saying how to authenticate', async () => {
    const r = await post(null, JSON.stringify({ query: '{ tags { id } }' }));
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toBe('Bearer');
    const body = await r.json();
    expect(body).toEqual({
      errors: [
        { message: expect.stringContaining('Authorization: Bearer <chave de API>'), extensions: { code: 'UNAUTHORIZED', status: 401 } },
      ],
    });
    // REST keeps its envelope 401.
    expect((await api.rest('GET', '/backend/tags')).body).toEqual({
      success: false,
      error: { code: 'UNAUTHORIZED', message: expect.any(String) },
    });
  });

  it('a successful operation is still 200 with data, and an error inside execution keeps 200 with its code', async () => {
    const org = await api.newOrg();
    const ok = await post(org.key, JSON.stringify({ query: 'query Tags { tags { id } }', operationName: 'Tags' }));
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ data: { tags: [] } });
    const missing = await post(org.key, JSON.stringify({ query: '{ lead(id: "00000000-0000-4000-8000-000000000000") { id } }' }));
    expect(missing.status).toBe(200);
    expect((await missing.json()).errors[0].extensions).toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });
});

describe('GraphiQL', () => {
  it('is served from the local package, with no address outside the server, and an empty Authorization header to fill in', async () => {
    const r = await api.raw('/graphql', { headers: { accept: 'text/html' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('text/html');
    const html = await r.text();
    expect(html).toContain('<title>Funil GraphQL</title>');
    expect(html).toContain('YogaGraphiQL.renderYogaGraphiQL');
    // No script, stylesheet or icon is loaded from elsewhere.
    expect(html).not.toMatch(/<(script|link)[^>]+(src|href)=["']?https?:/i);
    expect(html).not.toMatch(/unpkg\.com|jsdelivr|googleapis/);
    // Rendered through the wrapper that fetches the schema again once a key is pasted (graphiql-page.ts).
    const options = JSON.parse(/funilRenderGraphiQL\(\s*window\.document\.querySelector\('#root'\),\s*(\{.*?\}),\s*\);/s.exec(html)![1]);
    expect(JSON.parse(options.headers)).toEqual({ Authorization: '' });
  });
});

describe('request log', () => {
  afterEach(() => {
    setLogLevel('silent');
    vi.restoreAllMocks();
  });

  function captureLines(level: 'info' | 'debug') {
    const lines: Record<string, unknown>[] = [];
    setLogLevel(level);
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      return true;
    });
    return lines;
  }

  it('names the organisation, the key and the operation (GraphQL operation name, REST operationId); probes only at debug', async () => {
    const org = await api.newOrg();
    const lines = captureLines('info');
    await post(org.key, JSON.stringify({ query: 'query BoardTags { tags { id } }' }));
    await post(org.key, JSON.stringify({ query: '{ leadStatuses { id } tags { id } }' }));
    await api.rest('GET', '/backend/tags', { key: org.key });
    await api.raw('/health');
    await api.raw('/ready');
    const requests = lines.filter((l) => l.msg === 'request');
    expect(requests.map((l) => [l.path, l.operation])).toEqual([
      ['/graphql', 'BoardTags'],
      ['/graphql', 'query leadStatuses,tags'],
      ['/backend/tags', 'tags'],
    ]);
    const key = await api.db.prisma.apiKey.findFirstOrThrow({ where: { tenant_id: org.tenantId } });
    for (const line of requests)
      expect(line).toMatchObject({ level: 'info', tenantId: org.tenantId, keyId: key.id, status: 200, requestId: expect.any(String) });

    const debug = captureLines('debug');
    await api.raw('/health');
    expect(debug.find((l) => l.path === '/health')).toMatchObject({ level: 'debug', msg: 'request', status: 200 });
  });
});
