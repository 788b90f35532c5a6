// Who may manage users and keys (decisions.md): an owner or admin with a full key; a new key's
// permissions within its user's role; owners created, and keys for owners made, only by an owner.
import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, useTestApp, type Org } from '../helpers/app.js';
import { allPermissions } from '../../src/auth/permissions.js';
import '../../src/domains/index.js';

const api = useTestApp();

const FORBIDDEN = { success: false, error: { code: 'FORBIDDEN', message: expect.any(String) } };

async function newUser(org: Org, role: 'owner' | 'admin' | 'operator', key = org.key) {
  const r = await api.rest('POST', '/backend/users', {
    key,
    body: { name: role, email: `${role}-${Math.random().toString(36).slice(2)}@example.com`, role },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.data.id as string;
}

async function newKey(org: Org, body: Record<string, unknown>, key = org.key) {
  const r = await api.rest('POST', '/backend/api-keys', { key, body: { name: 'k', ...body } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.data as { id: string; key: string; permissions: string[] };
}

const works = async (key: string) => (await api.rest('GET', '/backend/tags', { key })).status === 200;

describe('a narrowed key', () => {
  it('cannot create keys or users, nor revoke or delete keys, whatever its role, on REST and GraphQL', async () => {
    const org = await api.newOrg();
    const victim = await newKey(org, { name: 'victim' });
    const owner = await newUser(org, 'owner');
    const admin = await newUser(org, 'admin');
    const narrowed = {
      'owner, pipeline.view': (await newKey(org, { user_id: owner, permissions: ['pipeline.view'] })).key,
      'admin, pipeline.view': (await newKey(org, { user_id: admin, permissions: ['pipeline.view'] })).key,
      // A list naming every permission of the role still narrows.
      'owner, every permission': (await newKey(org, { user_id: owner, permissions: allPermissions() })).key,
    };
    const keysBefore = await api.db.prisma.apiKey.count({ where: { tenant_id: org.tenantId } });
    const usersBefore = await api.db.prisma.user.count({ where: { tenant_id: org.tenantId } });
    for (const [name, key] of Object.entries(narrowed)) {
      for (const [method, path, body] of [
        ['POST', '/backend/api-keys', { name: 'escalated' }],
        ['POST', '/backend/api-keys', { name: 'escalated', permissions: ['pipeline.view'] }],
        ['POST', `/backend/api-keys/${victim.id}/revoke`, undefined],
        ['DELETE', `/backend/api-keys/${victim.id}`, undefined],
        ['POST', '/backend/users', { name: 'x', email: `x${Math.random()}@example.com`, role: 'owner' }],
        ['POST', '/backend/users', { name: 'x', email: `x${Math.random()}@example.com`, role: 'operator' }],
      ] as const) {
        const r = await api.rest(method, path, { key, body });
        expect(r.status, `${name}: ${method} ${path}`).toBe(403);
        expect(r.body).toEqual(FORBIDDEN);
      }
      const g = await api.raw('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ query: 'mutation { createApiKey(name: "g") { key } }' }),
      });
      expect((await g.json()).errors[0].extensions, name).toMatchObject({ code: 'FORBIDDEN', status: 403 });
      // Reading what it may read still works.
      expect((await api.rest('GET', '/backend/pipelines', { key })).status, name).toBe(200);
    }
    expect(await api.db.prisma.apiKey.count({ where: { tenant_id: org.tenantId } })).toBe(keysBefore);
    expect(await api.db.prisma.user.count({ where: { tenant_id: org.tenantId } })).toBe(usersBefore);
    expect(await works(victim.key)).toBe(true);
  });

  it('is any key created with a non-empty list; absent or [] makes a full key that may manage', async () => {
    const org = await api.newOrg();
    const admin = await newUser(org, 'admin');
    for (const permissions of [undefined, []]) {
      const full = await newKey(org, { user_id: admin, permissions });
      expect(full.permissions).toEqual([]);
      const made = await newKey(org, { name: 'made by full' }, full.key);
      expect(await works(made.key)).toBe(true);
      expect((await api.rest('POST', `/backend/api-keys/${made.id}/revoke`, { key: full.key })).status).toBe(200);
      expect(await works(made.key)).toBe(false);
    }
  });
});

describe("a new key's permissions", () => {
  it('must lie within its user’s role (400), and unknown names are refused', async () => {
    const org = await api.newOrg();
    const operator = await newUser(org, 'operator');
    for (const permissions of [['pipeline.manage'], ['pipeline.view', 'pipeline.deals.delete'], ['pipeline.view', 'everything']]) {
      const r = await api.rest('POST', '/backend/api-keys', { key: org.key, body: { name: 'wide', user_id: operator, permissions } });
      expect(r.status, permissions.join()).toBe(400);
      expect(r.body).toEqual({ success: false, error: { code: 'VALIDATION_ERROR', message: expect.any(String) } });
    }
    expect(await api.db.prisma.apiKey.count({ where: { user_id: operator } })).toBe(0);
    const narrow = await newKey(org, { user_id: operator, permissions: ['pipeline.view', 'pipeline.deals.edit'] });
    expect(narrow.permissions).toEqual(['pipeline.view', 'pipeline.deals.edit']);
  });
});

describe('owners', () => {
  it('only an owner creates an owner or a key for one; an admin creates admins, operators and their keys', async () => {
    const org = await api.newOrg();
    const adminKey = (await newKey(org, { user_id: await newUser(org, 'admin') })).key;

    const ownerUser = await api.rest('POST', '/backend/users', {
      key: adminKey,
      body: { name: 'o', email: 'o@example.com', role: 'owner' },
    });
    expect(ownerUser.status).toBe(403);
    expect(ownerUser.body).toEqual(FORBIDDEN);
    for (const permissions of [undefined, ['pipeline.view']]) {
      const ownerKey = await api.rest('POST', '/backend/api-keys', {
        key: adminKey,
        body: { name: 'o', user_id: org.userId, permissions },
      });
      expect(ownerKey.status).toBe(403);
      expect(ownerKey.body).toEqual(FORBIDDEN);
    }
    expect(await api.db.prisma.user.count({ where: { tenant_id: org.tenantId, role: 'owner' } })).toBe(1);
    expect(await api.db.prisma.apiKey.count({ where: { user_id: org.userId } })).toBe(1);

    const admin2 = await newUser(org, 'admin', adminKey);
    const operator = await newUser(org, 'operator', adminKey);
    expect(await works((await newKey(org, { user_id: admin2 }, adminKey)).key)).toBe(true);
    expect(await works((await newKey(org, { user_id: operator, permissions: ['pipeline.view'] }, adminKey)).key)).toBe(true);
    expect(await works((await newKey(org, {}, adminKey)).key)).toBe(true); // for the admin itself

    const owner2 = await newUser(org, 'owner');
    expect(await works((await newKey(org, { user_id: owner2 })).key)).toBe(true);
  });
});

describe('the platform operator over HTTP', () => {
  it('manages no organisation’s users or keys with ADMIN_TOKEN (it has no organisation there)', async () => {
    const org = await api.newOrg();
    for (const [path, body] of [
      ['/backend/api-keys', { name: 'op' }],
      ['/backend/api-keys', { name: 'op', user_id: org.userId }],
      ['/backend/users', { name: 'x', email: 'x@example.com', role: 'owner' }],
    ] as const) {
      const r = await api.rest('POST', path, { key: ADMIN_TOKEN, body });
      expect(r.status, path).toBe(403);
      expect(r.body).toEqual(FORBIDDEN);
    }
  });
});
