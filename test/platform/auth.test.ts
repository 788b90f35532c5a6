// Authentication and authorisation: the exact 401 body for every way a key can be wrong, 403 per role
// and per narrowed key on both transports, and keys never stored in plain text.
import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, useTestApp } from '../helpers/app.js';
import { bootstrapOrganisation } from '../../src/domains/accounts/service.js';
import { generateApiKey } from '../../src/auth/keys.js';

const api = useTestApp();

const UNAUTHORIZED = { success: false, error: { code: 'UNAUTHORIZED', message: expect.any(String) } };
// /graphql answers GraphQL's own error shape, which GraphQL clients (and GraphiQL) read.
const GRAPHQL_UNAUTHORIZED = {
  errors: [{ message: expect.stringContaining('Authorization: Bearer'), extensions: { code: 'UNAUTHORIZED', status: 401 } }],
};

async function gqlWith(header: string | undefined) {
  const response = await api.raw('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(header ? { authorization: header } : {}) },
    body: JSON.stringify({ query: '{ tags { id } }' }),
  });
  return { status: response.status, body: await response.json() };
}

describe('401', () => {
  it('answers every bad key with 401: the envelope body on REST (both styles), GraphQL errors on /graphql', async () => {
    const org = await api.newOrg();
    const revoked = await api.rest('POST', '/backend/api-keys', { key: org.key, body: { name: 'to revoke' } });
    const deleted = await api.rest('POST', '/backend/api-keys', { key: org.key, body: { name: 'to delete' } });
    const expiring = await api.rest('POST', '/backend/api-keys', {
      key: org.key,
      body: { name: 'to expire', expires_at: new Date(Date.now() + 60_000).toISOString() },
    });
    for (const k of [revoked, deleted, expiring]) expect(k.status).toBe(201);
    // All three work before they are made invalid.
    for (const k of [revoked, deleted, expiring])
      expect((await api.rest('GET', '/backend/tags', { key: k.body.data.key })).status).toBe(200);

    expect((await api.rest('POST', `/backend/api-keys/${revoked.body.data.id}/revoke`, { key: org.key })).status).toBe(200);
    const del = await api.rest('DELETE', `/backend/api-keys/${deleted.body.data.id}`, { key: org.key });
    expect(del.status).toBe(204);
    expect(del.body).toBeUndefined();
    await api.db.prisma.apiKey.update({
      where: { tenant_id_id: { tenant_id: org.tenantId, id: expiring.body.data.id } },
      data: { expires_at: new Date(Date.now() - 1000) },
    });

    const wellFormedUnknown = generateApiKey();
    const badChecksum = org.key.slice(0, -1) + (org.key.endsWith('A') ? 'B' : 'A');
    const headers: Record<string, string | undefined> = {
      missing: undefined,
      'not bearer': `Basic ${Buffer.from('a:b').toString('base64')}`,
      'empty bearer': 'Bearer ',
      malformed: 'Bearer short',
      'bad checksum': `Bearer ${badChecksum}`,
      unknown: `Bearer ${wellFormedUnknown}`,
      revoked: `Bearer ${revoked.body.data.key}`,
      deleted: `Bearer ${deleted.body.data.key}`,
      expired: `Bearer ${expiring.body.data.key}`,
    };
    for (const [name, header] of Object.entries(headers)) {
      for (const path of ['/backend/leads', '/backend/pipelines']) {
        const r = await api.raw(path, { headers: header ? { authorization: header } : {} });
        expect(r.status, `${name} ${path}`).toBe(401);
        expect(await r.json(), `${name} ${path}`).toEqual(UNAUTHORIZED);
      }
      const g = await gqlWith(header);
      expect(g.status, `${name} graphql`).toBe(401);
      expect(g.body, `${name} graphql`).toEqual(GRAPHQL_UNAUTHORIZED);
    }
  });

  it('refuses a malformed key without touching the database', async () => {
    const n = await api.countStatements(() => api.rest('GET', '/backend/tags', { key: 'fnl_thisisnotavalidkeyatall000000000000000' }));
    expect(n).toBe(0);
  });
});

describe('403', () => {
  it('keeps users and API keys to Owner/Admin, on REST and GraphQL', async () => {
    const org = await api.newOrg();
    const operator = await api.keyFor(org, 'operator');
    const admin = await api.keyFor(org, 'admin');
    const forbidden = { success: false, error: { code: 'FORBIDDEN', message: expect.any(String) } };
    for (const [method, path, body] of [
      ['GET', '/backend/users', undefined],
      ['POST', '/backend/users', { name: 'x', email: 'x@example.com', role: 'admin' }],
      ['GET', '/backend/api-keys', undefined],
      ['POST', '/backend/api-keys', { name: 'mine' }],
    ] as const) {
      const r = await api.rest(method, path, { key: operator, body });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body).toEqual(forbidden);
      expect(
        (await api.rest(method, path, { key: admin, body: body && { ...body, email: `a${Math.random()}@example.com` } })).status,
      ).toBeLessThan(300);
    }
    const g = await api.raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${operator}` },
      body: JSON.stringify({ query: '{ users { id } }' }),
    });
    const body = await g.json();
    expect(body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    expect(body.data).toBeNull();
  });

  it('narrows a key to its permissions, never beyond its role, identically on both transports', async () => {
    const org = await api.newOrg();
    const viewOnly = await api.keyFor(org, 'admin', ['pipeline.view']);
    const list = await api.rest('GET', '/backend/pipelines', { key: viewOnly });
    expect(list.status).toBe(200);
    const create = await api.rest('POST', '/backend/pipelines', { key: viewOnly, body: { name: 'P', new_group_name: 'G' } });
    expect(create.status).toBe(403);
    expect(create.body).toEqual({ code: 'ERR_FORBIDDEN', message: expect.any(String) });
    const g = await api.raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${viewOnly}` },
      body: JSON.stringify({ query: 'mutation { createPipeline(name: "P", new_group_name: "G") { id } }' }),
    });
    expect((await g.json()).errors[0].extensions.code).toBe('FORBIDDEN');
    // A key narrows, never widens: an operator key asking for pipeline.manage is refused.
    const user = await api.rest('POST', '/backend/users', {
      key: org.key,
      body: { name: 'op', email: 'op@example.com', role: 'operator' },
    });
    const widened = await api.rest('POST', '/backend/api-keys', {
      key: org.key,
      body: { name: 'w', user_id: user.body.data.id, permissions: ['pipeline.manage'] },
    });
    expect(widened.status).toBe(400);
    // Nothing was created by the refused calls.
    expect(await api.db.prisma.pipeline.count({ where: { tenant_id: org.tenantId } })).toBe(0);
  });

  it('refuses unknown permission names when creating a key', async () => {
    const org = await api.newOrg();
    const r = await api.rest('POST', '/backend/api-keys', { key: org.key, body: { name: 'x', permissions: ['pipeline.everything'] } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('VALIDATION_ERROR');
  });
});

describe('API keys', () => {
  it('shows a key once, lists keys without secrets, records last use', async () => {
    const org = await api.newOrg();
    const created = await api.rest('POST', '/backend/api-keys', {
      key: org.key,
      body: { name: 'integration', permissions: ['pipeline.view'] },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      success: true,
      data: {
        id: expect.any(String),
        name: 'integration',
        key: expect.stringMatching(/^fnl_[0-9A-Za-z]{38}$/),
        prefix: created.body.data.key.slice(0, 10),
        user_id: org.userId,
        permissions: ['pipeline.view'],
        expires_at: null,
        created_at: expect.any(String),
      },
    });
    await api.rest('GET', '/backend/tags', { key: created.body.data.key });
    const list = await api.rest('GET', '/backend/api-keys', { key: org.key });
    const listed = list.body.data.find((k: any) => k.id === created.body.data.id);
    expect(listed).not.toHaveProperty('key');
    expect(listed.last_used_at).not.toBeNull();
    expect(listed.revoked_at).toBeNull();
    // Within a few minutes, further use does not write again.
    await api.rest('GET', '/backend/tags', { key: created.body.data.key });
    const again = await api.db.prisma.apiKey.findFirstOrThrow({ where: { id: created.body.data.id } });
    expect(again.last_used_at!.toISOString()).toBe(listed.last_used_at);
  });

  it('stores no plaintext key anywhere', async () => {
    const org = await api.newOrg();
    const extra = await api.rest('POST', '/backend/api-keys', { key: org.key, body: { name: 'another' } });
    const secrets = [org.key, extra.body.data.key].map((k) => k.slice(4)); // the secret part, without the public prefix
    const tables = await api.db.sql.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`,
    );
    expect(tables.length).toBeGreaterThan(5);
    for (const { table_name } of tables) {
      const rows = await api.db.sql.query<{ row: string }>(`SELECT row_to_json(t)::text AS row FROM "${table_name}" t`);
      for (const { row } of rows) for (const secret of secrets) expect(row, table_name).not.toContain(secret);
    }
  });

  it('creates an organisation with ADMIN_TOKEN only', async () => {
    const r = await api.rest('POST', '/backend/admin/tenants', {
      key: ADMIN_TOKEN,
      body: { name: 'Acme', owner_name: 'Ana', owner_email: 'ana@acme.test' },
    });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      tenant: { id: expect.any(String), name: 'Acme', created_at: expect.any(String) },
      user: {
        id: expect.any(String),
        name: 'Ana',
        email: 'ana@acme.test',
        role: 'owner',
        availability: 'offline',
        capacity: null,
        created_at: expect.any(String),
      },
      api_key: expect.stringMatching(/^fnl_/),
    });
    expect((await api.rest('GET', '/backend/users', { key: r.body.api_key })).body.data).toHaveLength(1);
    const withTenantKey = await api.rest('POST', '/backend/admin/tenants', { key: r.body.api_key, body: { name: 'X' } });
    expect(withTenantKey.status).toBe(404);
    // decisions.md: with ADMIN_TOKEN set, a missing or wrong token answers 404 like an unknown path, whatever the method.
    for (const [method, key] of [
      ['POST', undefined],
      ['POST', 'wrong-admin-token-0123456789'],
      ['GET', undefined],
      ['GET', ADMIN_TOKEN],
      ['DELETE', ADMIN_TOKEN],
    ] as const) {
      const r = await api.rest(method, '/backend/admin/tenants', { key, body: method === 'POST' ? { name: 'X' } : undefined });
      expect(r.status, `${method} with ${key ?? 'no key'}`).toBe(404);
      expect(r.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: 'Rota não encontrada' } });
    }
  });

  it('bootstraps an empty database with BOOTSTRAP_API_KEY, once', async () => {
    // This file's database already has organisations, so bootstrap does nothing here…
    expect(await bootstrapOrganisation(api.db.prisma, 'bootstrap-key-0123456789')).toBeNull();
  });
});

describe('users', () => {
  it('creates users with a role, email unique per organisation', async () => {
    const org = await api.newOrg();
    const other = await api.newOrg();
    const body = { name: 'Bia', email: 'bia@example.com', role: 'operator' };
    const r = await api.rest('POST', '/backend/users', { key: org.key, body });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      success: true,
      data: {
        id: expect.any(String),
        name: 'Bia',
        email: 'bia@example.com',
        role: 'operator',
        availability: 'offline',
        capacity: null,
        created_at: expect.any(String),
      },
    });
    const dup = await api.rest('POST', '/backend/users', { key: org.key, body });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('ALREADY_EXISTS');
    expect((await api.rest('POST', '/backend/users', { key: other.key, body })).status).toBe(201);
    const badRole = await api.rest('POST', '/backend/users', { key: org.key, body: { ...body, email: 'c@example.com', role: 'boss' } });
    expect(badRole.status).toBe(400);
    expect(badRole.body.error.code).toBe('VALIDATION_ERROR');
  });
});
