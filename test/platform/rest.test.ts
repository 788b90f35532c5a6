// The REST layer itself: unknown paths, body limits and formats, 204 without a body, the OpenAPI
// document, request ids, and REST and GraphQL giving the same data for the same operation.
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { graphql } from '../gql/index.js';
import { makeLead } from '../helpers/factories.js';

const api = useTestApp();

describe('routing', () => {
  it('answers unknown /backend paths with 404 in the shape of their area', async () => {
    const org = await api.newOrg();
    const bare = await api.rest('GET', '/backend/pipeline/nothing-here', { key: org.key });
    expect(bare.status).toBe(404);
    expect(bare.body).toEqual({ code: 'ERR_NOT_FOUND', message: expect.any(String) });
    const envelope = await api.rest('GET', '/backend/leads/a/b/c', { key: org.key });
    expect(envelope.status).toBe(404);
    expect(envelope.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: expect.any(String) } });
    // A known path with a method it does not take: 405 with the methods it does.
    const wrongMethod = await api.raw('/backend/tags', { method: 'PATCH', headers: { authorization: `Bearer ${org.key}` } });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET, POST, HEAD');
    expect(await wrongMethod.json()).toEqual({ success: false, error: { code: 'METHOD_NOT_ALLOWED', message: expect.any(String) } });
    const bareWrong = await api.raw('/backend/pipelines', { method: 'DELETE', headers: { authorization: `Bearer ${org.key}` } });
    expect([bareWrong.status, (await bareWrong.json()).code]).toEqual([405, 'ERR_METHOD_NOT_ALLOWED']);
    expect((await api.rest('GET', '/elsewhere')).status).toBe(404);
  });

  it('refuses bodies that are not a JSON object with 400', async () => {
    const org = await api.newOrg();
    for (const body of ['{not json', '[1,2]', '"text"']) {
      const r = await api.raw('/backend/tags', {
        method: 'POST',
        headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
        body,
      });
      expect(r.status, body).toBe(400);
      expect((await r.json()).error.code).toBe('VALIDATION_ERROR');
    }
  });

  it('refuses a body over 10 MB with 413, declared or streamed', async () => {
    const org = await api.newOrg();
    const declared = await api.raw('/backend/leads', {
      method: 'POST',
      headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json', 'content-length': String(11 * 1024 * 1024) },
      body: '{}',
    });
    expect(declared.status).toBe(413);
    expect(await declared.json()).toEqual({ success: false, error: { code: 'PAYLOAD_TOO_LARGE', message: expect.any(String) } });
    let sent = 0;
    const chunk = new Uint8Array(1024 * 1024).fill(32);
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 20) return controller.close();
        sent++;
        controller.enqueue(chunk);
      },
    });
    const streamed = await api.raw('/backend/pipeline/products', {
      method: 'POST',
      headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(await streamed.json()).toEqual({ code: 'ERR_PAYLOAD_TOO_LARGE', message: expect.any(String) });
    expect(sent).toBeLessThan(15); // stopped reading soon after passing the limit (20 chunks were on offer)
  });

  it('answers HEAD on a GET route as the GET would, without a body', async () => {
    const org = await api.newOrg();
    const lead = await makeLead(api, org, { name: 'Head' });
    for (const path of [`/backend/leads/${lead.id}`, '/backend/leads', '/backend/tags']) {
      const get = await api.raw(path, { headers: { authorization: `Bearer ${org.key}` } });
      const head = await api.raw(path, { method: 'HEAD', headers: { authorization: `Bearer ${org.key}` } });
      expect(head.status, path).toBe(get.status);
      expect(head.headers.get('content-type'), path).toBe(get.headers.get('content-type'));
      expect(await head.text(), path).toBe('');
      expect((await get.text()).length, path).toBeGreaterThan(0);
    }
    const missing = await api.raw('/backend/leads/00000000-0000-4000-8000-000000000000', {
      method: 'HEAD',
      headers: { authorization: `Bearer ${org.key}` },
    });
    expect(missing.status).toBe(404);
    const notUuid = await api.raw('/backend/leads/abc', { method: 'HEAD', headers: { authorization: `Bearer ${org.key}` } });
    expect(notUuid.status).toBe(400);
  });

  it('answers 204 with no body', async () => {
    const org = await api.newOrg();
    const key = await api.rest('POST', '/backend/api-keys', { key: org.key, body: { name: 'x' } });
    const r = await api.raw(`/backend/api-keys/${key.body.data.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${org.key}` } });
    expect(r.status).toBe(204);
    expect(await r.text()).toBe('');
  });

  it('echoes or assigns a request id', async () => {
    const given = await api.raw('/health', { headers: { 'x-request-id': 'abc-123' } });
    expect(given.headers.get('x-request-id')).toBe('abc-123');
    const assigned = await api.raw('/health');
    expect(assigned.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('publishes an OpenAPI document of the documented routes only', async () => {
    const r = await api.raw('/backend/openapi.json');
    expect(r.status).toBe(200);
    const doc = await r.json();
    expect(doc.paths['/backend/leads'].post).toBeDefined();
    expect(doc.paths['/backend/tags/{id}'].put).toBeDefined();
    // Graph-only fields are not part of REST answers.
    expect(JSON.stringify(doc.components.schemas.Pipeline ?? {})).not.toContain('"group"');
    expect(Object.keys(doc.paths).every((p) => !p.includes('node'))).toBe(true);
    const ui = await api.raw('/backend/docs');
    expect(ui.status).toBe(200);
    expect(ui.headers.get('content-type')).toContain('text/html');
  });

  it('reports health and readiness', async () => {
    expect(await (await api.raw('/health')).json()).toEqual({ status: 'ok' });
    expect(await (await api.raw('/ready')).json()).toEqual({ status: 'ready' });
  });
});

const CreateLead = graphql(`
  mutation CreateLead($name: String!, $phone: String!, $tag_ids: [UUID!], $custom_fields: JSONObject) {
    createLead(name: $name, phone: $phone, tag_ids: $tag_ids, custom_fields: $custom_fields) {
      id name phone email company custom_fields created_at
      status { id name color }
      tags { id name color }
    }
  }
`);

const LeadById = graphql(`
  query LeadById($id: UUID!) {
    lead(id: $id) { id name phone email company custom_fields created_at status { id name color } tags { id name color } }
  }
`);

describe('one implementation, two transports', () => {
  it('gives the same data through GraphQL and REST', async () => {
    const org = await api.newOrg();
    const tag = (await api.rest('POST', '/backend/tags', { key: org.key, body: { name: 'x', color: '#123456' } })).body.data;
    const viaGraphQL = await api.gql(
      CreateLead,
      { name: 'G', phone: '+5511912340000', tag_ids: [tag.id], custom_fields: { k: 'v' } },
      org.key,
    );
    expect(viaGraphQL.errors).toBeUndefined();
    const created = viaGraphQL.data!.createLead;
    const viaRest = await api.rest('GET', `/backend/leads/${created.id}`, { key: org.key });
    expect(viaRest.body.data).toMatchObject(created);
    const readBack = await api.gql(LeadById, { id: created.id }, org.key);
    expect(readBack.data!.lead).toEqual(created);
    // The same rule answers the same way: a duplicate phone.
    const dupGql = await api.gql(CreateLead, { name: 'G2', phone: '+5511912340000' }, org.key);
    expect(dupGql.errors![0].extensions).toMatchObject({ code: 'ALREADY_EXISTS', status: 409 });
    const dupRest = await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'G2', phone: '+5511912340000' } });
    expect(dupRest.body.error.code).toBe('ALREADY_EXISTS');
    expect(dupRest.body.error.message).toBe(dupGql.errors![0].message);
  });

  it('never shows internals in errors', async () => {
    const org = await api.newOrg();
    const r = await api.raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
      body: JSON.stringify({ query: '{ lead(id: "not-a-uuid") { id } }' }),
    });
    const text = await r.text();
    expect(text).not.toMatch(/at .*\.ts:\d+|SELECT |prisma/i);
  });
});

describe('GraphQL limits', () => {
  it('refuses queries deeper than the limit', async () => {
    const org = await api.newOrg();
    let selection = 'id';
    for (let i = 0; i < 12; i++) selection = `stages { pipeline { ${selection} } }`;
    const r = await api.raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
      body: JSON.stringify({ query: `{ pipelines { pipelines { ${selection} } } }` }),
    });
    const body = await r.json();
    expect(body.errors?.[0]?.message).toMatch(/depth/i);
  });
});
