// decisions.md "Input rules that hold on every route": REST bodies typed like GraphQL arguments without
// coercion, query strings read only for documented parameters, NUL and unpaired surrogates refused,
// deep nesting refused, trailing slashes, forged cursors, CORS. Each answers a clear 4xx, never a 500.
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { makeLead, makePipeline, makeProduct, nextPhone } from '../helpers/factories.js';

const api = useTestApp();
const withCors = useTestApp({ CORS_ORIGINS: 'https://app.example, https://admin.example/' });

describe('REST bodies are typed like the GraphQL arguments', () => {
  it('refuses values of the wrong type instead of coercing them', async () => {
    const org = await api.newOrg();
    const tag = (await api.rest('POST', '/backend/tags', { key: org.key, body: { name: 't', color: '#111111' } })).body.data;
    const cases: [string, string, Record<string, unknown>][] = [
      ['POST', '/backend/tags', { name: 123, color: '#111111' }],
      ['POST', '/backend/leads', { name: 'Ana', phone: nextPhone(), tag_ids: tag.id }],
      ['POST', '/backend/pipeline/products', { name: 'P', price: '10' }],
      ['POST', '/backend/leads', { name: ['Ana'], phone: nextPhone() }],
    ];
    for (const [method, path, body] of cases) {
      const r = await api.rest(method, path, { key: org.key, body });
      expect(r.status, `${path} ${JSON.stringify(body)}`).toBe(400);
      expect(JSON.stringify(r.body)).toMatch(/VALIDATION_ERROR|ERR_INVALID_INPUT/);
    }
    // Nothing was written by the refused calls.
    expect((await api.rest('GET', '/backend/tags', { key: org.key })).body.data).toHaveLength(1);
    expect((await api.rest('GET', '/backend/pipeline/products', { key: org.key })).body).toEqual([]);
  });

  it('refuses "done": "yes" on an activity instead of reading it as false', async () => {
    const org = await api.newOrg();
    const p = await makePipeline(api, org);
    const lead = await makeLead(api, org);
    const deal = await api.rest('POST', '/backend/pipeline/deals', {
      key: org.key,
      body: { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id },
    });
    expect(deal.status).toBe(201);
    for (const done of ['yes', 1, 'true']) {
      const r = await api.rest('POST', `/backend/pipeline/deals/${deal.body.id}/activities`, {
        key: org.key,
        body: { title: 'Ligar', done },
      });
      expect(r.status, JSON.stringify(done)).toBe(400);
      expect(r.body.code).toBe('ERR_INVALID_INPUT');
    }
    expect((await api.rest('GET', `/backend/pipeline/deals/${deal.body.id}/activities`, { key: org.key })).body).toEqual([]);
  });

  it('never lets a query string override a body key, and ignores undocumented query parameters', async () => {
    const org = await api.newOrg();
    const phone = nextPhone();
    const r = await api.rest('POST', `/backend/leads?phone=${encodeURIComponent('+5511900009999')}&name=Evil`, {
      key: org.key,
      body: { name: 'Ana', phone },
    });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ name: 'Ana', phone });
    // An undocumented query parameter on a write does not stand in for a missing body key either.
    const missing = await api.rest('POST', `/backend/leads?phone=${encodeURIComponent(nextPhone())}`, {
      key: org.key,
      body: { name: 'Bia' },
    });
    expect(missing.status).toBe(400);
  });

  it('still reads the documented query parameters of reads and writes', async () => {
    const org = await api.newOrg();
    await makeLead(api, org, { name: 'Zeca' });
    const list = await api.rest('GET', '/backend/leads?search=zec&limit=5', { key: org.key });
    expect(list.status).toBe(200);
    expect(list.body.pagination).toMatchObject({ limit: 5, total: 1 });
    const bad = await api.rest('GET', '/backend/leads?limit=abc', { key: org.key });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_ERROR');
  });
});

describe('text the database cannot hold', () => {
  const DIRTY = ['a\u0000b', 'x\uD800y', 'x\uDC00', 'end\uD83D'];

  it('answers 400 on REST for NUL and unpaired surrogates in bodies, paths and search', async () => {
    const org = await api.newOrg();
    for (const name of DIRTY) {
      const lead = await api.rest('POST', '/backend/leads', { key: org.key, body: { name, phone: nextPhone() } });
      expect(lead.status, JSON.stringify(name)).toBe(400);
      expect(lead.body.error.code).toBe('VALIDATION_ERROR');
      const product = await api.rest('POST', '/backend/pipeline/products', { key: org.key, body: { name } });
      expect(product.status).toBe(400);
      expect(product.body.code).toBe('ERR_INVALID_INPUT');
      const custom = await api.rest('POST', '/backend/leads', {
        key: org.key,
        body: { name: 'ok', phone: nextPhone(), custom_fields: { note: name } },
      });
      expect(custom.status).toBe(400);
    }
    const search = await api.rest('GET', `/backend/leads?search=${encodeURIComponent('a\u0000')}`, { key: org.key });
    expect(search.status).toBe(400);
    const p = await makePipeline(api, org);
    const dealsSearch = await api.rest('GET', `/backend/pipelines/${p.id}/deals?search=%00`, { key: org.key });
    expect(dealsSearch.status).toBe(400);
    expect((await api.rest('GET', '/backend/leads', { key: org.key })).body.data).toEqual([]);
  });

  it('answers 400 on GraphQL for dirty variables and literals', async () => {
    const org = await api.newOrg();
    const post = (body: unknown) =>
      api.raw('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
        body: JSON.stringify(body),
      });
    for (const name of DIRTY) {
      const r = await post({ query: 'mutation($n: String!) { createTag(name: $n, color: "#111111") { id } }', variables: { n: name } });
      expect(r.status, JSON.stringify(name)).toBe(400);
      const body = await r.json();
      expect(body.errors[0].extensions).toMatchObject({ code: 'INVALID_INPUT', status: 400 });
    }
    const literal = await post({ query: 'mutation { createTag(name: "a\\u0000b", color: "#111111") { id } }' });
    expect(literal.status).toBe(400);
    expect((await literal.json()).errors[0].extensions.code).toBe('INVALID_INPUT');
  });

  it('refuses custom_fields nested ~128 deep with 400 on both transports', async () => {
    const org = await api.newOrg();
    let deep: unknown = 'x';
    for (let i = 0; i < 128; i++) deep = { a: deep };
    const rest = await api.rest('POST', '/backend/leads', {
      key: org.key,
      body: { name: 'Ana', phone: nextPhone(), custom_fields: { k: deep } },
    });
    expect(rest.status).toBe(400);
    expect(rest.body.error.code).toBe('VALIDATION_ERROR');
    const gql = await api.raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
      body: JSON.stringify({
        query: 'mutation($c: JSONObject) { createLead(name: "Ana", phone: "+5511988887777", custom_fields: $c) { id } }',
        variables: { c: { k: deep } },
      }),
    });
    expect(gql.status).toBe(400);
  });
});

describe('paths and cursors', () => {
  it('treats a trailing slash as the same path', async () => {
    const org = await api.newOrg();
    const lead = await makeLead(api, org, { name: 'Slash' });
    const list = await api.rest('GET', '/backend/leads/', { key: org.key });
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    const one = await api.rest('GET', `/backend/leads/${lead.id}/`, { key: org.key });
    expect(one.status).toBe(200);
    expect(one.body.data.id).toBe(lead.id);
    const product = await api.rest('POST', '/backend/pipeline/products/', { key: org.key, body: { name: 'Com barra', price: 1 } });
    expect(product.status).toBe(201);
    const pipelines = await api.rest('GET', '/backend/pipelines/', { key: org.key });
    expect(pipelines.status).toBe(200);
  });

  it('answers 400 to forged GraphQL cursors', async () => {
    const org = await api.newOrg();
    const p = await makePipeline(api, org);
    const lead = await makeLead(api, org);
    await makeProduct(api, org, 'x', 1);
    await api.rest('POST', '/backend/pipeline/deals', { key: org.key, body: { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id } });
    const forged = [
      'zzz',
      '%%%',
      Buffer.from('GPC:S:not-a-uuid').toString('base64'),
      Buffer.from('GPC:J:{"a":').toString('base64'),
      Buffer.from('2020-01-01|not-a-uuid').toString('base64url'),
    ];
    for (const after of forged) {
      for (const query of [
        `query($id: UUID!, $after: String) { lead(id: $id) { deals(first: 2, after: $after) { edges { node { id } } } } }`,
        `query($pid: UUID!, $after: String) { pipeline(id: $pid) { stages { deals(first: 2, after: $after) { edges { node { id } } } } } }`,
      ]) {
        const r = await api.raw('/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
          body: JSON.stringify({ query, variables: { id: lead.id, pid: p.id, after } }),
        });
        const body = await r.json();
        expect(body.errors?.[0]?.extensions?.code, `${after} ${query.slice(0, 30)}`).toBe('INVALID_INPUT');
        expect(body.errors[0].extensions.status).toBe(400);
      }
    }
  });
});

describe('CORS', () => {
  it('sends no cross-origin headers when CORS_ORIGINS is unset', async () => {
    const org = await api.newOrg();
    for (const path of ['/graphql', '/backend/leads']) {
      const preflight = await api.raw(path, {
        method: 'OPTIONS',
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
      });
      expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
      const r = await api.raw(path, { method: 'GET', headers: { origin: 'https://evil.example', authorization: `Bearer ${org.key}` } });
      expect(r.headers.get('access-control-allow-origin')).toBeNull();
      expect(r.headers.get('access-control-allow-credentials')).toBeNull();
    }
  });
});

describe('CORS with CORS_ORIGINS', () => {
  it('allows exactly the listed origins, with Authorization and without credentials', async () => {
    const org = await withCors.newOrg();
    for (const path of ['/graphql', '/backend/leads']) {
      const preflight = await withCors.raw(path, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://app.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, content-type',
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example');
      expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');
      // A browser client can send Idempotency-Key and read whether the answer was replayed.
      expect(preflight.headers.get('access-control-allow-headers')).toContain('idempotency-key');
      expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
      const allowed = await withCors.raw('/backend/leads', {
        headers: { origin: 'https://admin.example', authorization: `Bearer ${org.key}` },
      });
      expect(allowed.status).toBe(200);
      expect(allowed.headers.get('access-control-allow-origin')).toBe('https://admin.example');
      expect(allowed.headers.get('access-control-expose-headers')).toContain('idempotent-replayed');
      const other = await withCors.raw(path, {
        method: 'OPTIONS',
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
      });
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
    }
  });
});
