// Who am I (`GET /backend/me`, `viewer`), users changed and deleted, owners protected from admins, the
// last owner kept (also against concurrent demotions), bootstrap keys checked at start and `keygen`.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { generateApiKey, isGeneratedKey } from '../../src/auth/keys.js';
import { loadConfig } from '../../src/config.js';
import { useTestApp, type Org } from '../helpers/app.js';

const api = useTestApp();

async function user(org: Org, role: 'owner' | 'admin' | 'operator', permissions?: string[]) {
  const email = `${role}-${Math.random().toString(36).slice(2)}@example.com`;
  const created = await api.rest('POST', '/backend/users', { key: org.key, body: { name: `${role} user`, email, role } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const key = await api.rest('POST', '/backend/api-keys', {
    key: org.key,
    body: { name: `${role} key`, user_id: created.body.data.id, permissions },
  });
  return { id: created.body.data.id as string, email, key: key.body.data.key as string, keyId: key.body.data.id as string };
}

const gql = async (key: string, query: string, variables: Record<string, unknown> = {}) => {
  const r = await api.raw('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query, variables }),
  });
  return r.json();
};

describe('who am I', () => {
  it('GET /backend/me and viewer answer the key’s user, organisation and key, with what the key may do', async () => {
    const org = await api.newOrg('Acme');
    const op = await user(org, 'operator', ['leads.view']);
    const me = await api.rest('GET', '/backend/me', { key: op.key });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({
      success: true,
      data: {
        user: { id: op.id, name: 'operator user', email: op.email, role: 'operator', availability: 'offline', capacity: null },
        tenant: { id: org.tenantId, name: 'Acme' },
        api_key: { id: op.keyId, name: 'operator key', prefix: op.key.slice(0, 10), permissions: ['leads.view'], expires_at: null },
      },
    });
    const g = await gql(
      op.key,
      '{ viewer { user { id name email role availability capacity } tenant { id name } api_key { id name prefix permissions expires_at } } }',
    );
    expect(g.data.viewer).toEqual(me.body.data);
    // A full key lists its role's permissions; the organisation id is what the uploads listing needs.
    const full = (await api.rest('GET', '/backend/me', { key: org.key })).body.data;
    expect(full.api_key.permissions).toContain('uploads.manage');
    expect((await api.rest('GET', `/backend/uploads/tenant/${full.tenant.id}`, { key: org.key })).status).toBe(200);
    expect((await api.rest('GET', '/backend/me')).status).toBe(401);
  });
});

describe('users', () => {
  it('changes a user’s name, e-mail and role; e-mails stay unique; unknown and other organisations’ users are 404', async () => {
    const org = await api.newOrg();
    const other = await api.newOrg();
    const a = await user(org, 'operator');
    const b = await user(org, 'operator');
    const r = await api.rest('PUT', `/backend/users/${a.id}`, {
      key: org.key,
      body: { name: 'Ana', email: 'Ana@Example.com', role: 'admin' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      success: true,
      data: {
        id: a.id,
        name: 'Ana',
        email: 'ana@example.com',
        role: 'admin',
        availability: 'offline',
        capacity: null,
        created_at: expect.any(String),
      },
    });
    // The role change holds for the user's existing keys at once.
    expect((await api.rest('GET', '/backend/webhooks', { key: a.key })).status).toBe(200);
    const taken = await api.rest('PUT', `/backend/users/${b.id}`, { key: org.key, body: { email: 'ana@example.com' } });
    expect(taken.status).toBe(409);
    expect(taken.body.error.code).toBe('ALREADY_EXISTS');
    expect((await api.rest('PUT', `/backend/users/${b.id}`, { key: org.key, body: { role: 'boss' } })).status).toBe(400);
    expect((await api.rest('PUT', `/backend/users/${a.id}`, { key: other.key, body: { name: 'x' } })).status).toBe(404);
    expect((await api.rest('DELETE', `/backend/users/${a.id}`, { key: other.key })).status).toBe(404);
    expect((await api.rest('PUT', `/backend/users/${crypto.randomUUID()}`, { key: org.key, body: { name: 'x' } })).status).toBe(404);
    expect((await api.db.prisma.user.findFirstOrThrow({ where: { id: b.id } })).email).toBe(b.email);
  });

  it('deletes a user: 204, its keys stop working, its deals keep it as owner, its e-mail is free again', async () => {
    const org = await api.newOrg();
    const op = await user(org, 'operator');
    const pipeline = await api.rest('POST', '/backend/pipelines', { key: org.key, body: { name: 'P', new_group_name: 'G' } });
    const deal = await api.rest('POST', '/backend/pipeline/deals', {
      key: op.key,
      body: {
        pipeline_id: pipeline.body.id,
        stage_id: pipeline.body.stages[0].id,
        owner_id: op.id,
        new_lead: { name: 'L', phone: '+5511988887777' },
      },
    });
    expect(deal.status, JSON.stringify(deal.body)).toBe(201);
    const del = await api.rest('DELETE', `/backend/users/${op.id}`, { key: org.key });
    expect(del.status).toBe(204);
    expect(del.body).toBeUndefined();
    expect((await api.rest('GET', '/backend/me', { key: op.key })).status).toBe(401);
    const keys = (await api.rest('GET', '/backend/api-keys', { key: org.key })).body.data;
    expect(keys.find((k: any) => k.id === op.keyId).revoked_at).not.toBeNull();
    expect((await api.rest('GET', `/backend/pipeline/deals/${deal.body.id}`, { key: org.key })).body.owner_id).toBe(op.id);
    expect((await api.rest('GET', '/backend/users', { key: org.key })).body.data.map((u: any) => u.id)).not.toContain(op.id);
    expect((await api.rest('DELETE', `/backend/users/${op.id}`, { key: org.key })).status).toBe(404);
    expect((await api.rest('POST', '/backend/api-keys', { key: org.key, body: { name: 'k', user_id: op.id } })).status).toBe(404);
    const again = await api.rest('POST', '/backend/users', { key: org.key, body: { name: 'back', email: op.email, role: 'operator' } });
    expect(again.status).toBe(201);
  });

  it('keeps owners to owners: an admin cannot change, delete, promote to owner or touch an owner’s keys', async () => {
    const org = await api.newOrg();
    const admin = await user(org, 'admin');
    const owner2 = await user(org, 'owner');
    const op = await user(org, 'operator');
    const forbidden = async (method: string, path: string, body?: unknown) => {
      const r = await api.rest(method, path, { key: admin.key, body });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body.error.code).toBe('FORBIDDEN');
    };
    await forbidden('PUT', `/backend/users/${owner2.id}`, { name: 'x' });
    await forbidden('PUT', `/backend/users/${owner2.id}`, { role: 'operator' });
    await forbidden('DELETE', `/backend/users/${owner2.id}`);
    await forbidden('PUT', `/backend/users/${op.id}`, { role: 'owner' });
    await forbidden('POST', `/backend/api-keys/${owner2.keyId}/revoke`);
    await forbidden('DELETE', `/backend/api-keys/${owner2.keyId}`);
    await forbidden('DELETE', `/backend/api-keys/${(await api.rest('GET', '/backend/me', { key: org.key })).body.data.api_key.id}`);
    expect((await api.rest('GET', '/backend/me', { key: owner2.key })).status).toBe(200);
    expect((await api.db.prisma.user.findFirstOrThrow({ where: { id: op.id } })).role).toBe('operator');
    // An admin manages admins and operators; an owner manages owners.
    expect((await api.rest('PUT', `/backend/users/${op.id}`, { key: admin.key, body: { role: 'admin' } })).status).toBe(200);
    expect((await api.rest('POST', `/backend/api-keys/${op.keyId}/revoke`, { key: admin.key })).status).toBe(200);
    expect((await api.rest('PUT', `/backend/users/${owner2.id}`, { key: org.key, body: { role: 'admin' } })).status).toBe(200);
    // A narrowed owner key manages nobody.
    const narrowedOwner = await user(org, 'owner', ['leads.view']);
    expect((await api.rest('PUT', `/backend/users/${op.id}`, { key: narrowedOwner.key, body: { name: 'x' } })).status).toBe(403);
  });

  it('keeps the last owner: deleting or demoting it is 409 CONFLICT', async () => {
    const org = await api.newOrg();
    for (const [method, body] of [
      ['PUT', { role: 'admin' }],
      ['DELETE', undefined],
    ] as const) {
      const r = await api.rest(method, `/backend/users/${org.userId}`, { key: org.key, body });
      expect(r.status).toBe(409);
      expect(r.body).toEqual({ success: false, error: { code: 'CONFLICT', message: expect.any(String) } });
    }
    const g = await gql(org.key, 'mutation($id: UUID!) { deleteUser(id: $id) }', { id: org.userId });
    expect(g.errors[0].extensions.code).toBe('CONFLICT');
    // With a second owner, the first may go.
    const second = await user(org, 'owner');
    expect((await api.rest('DELETE', `/backend/users/${org.userId}`, { key: second.key })).status).toBe(204);
    expect((await api.rest('PUT', `/backend/users/${second.id}`, { key: second.key, body: { role: 'admin' } })).status).toBe(409);
  });

  it('lets only one of two concurrent demotions of the last two owners pass', async () => {
    for (let round = 0; round < 3; round++) {
      const org = await api.newOrg();
      const second = await user(org, 'owner');
      // Each owner steps down with its own key: whichever commits second is the last owner (409). With one
      // key for both, the second could instead find its caller no longer an owner (403).
      const demote = (id: string, key: string) => api.rest('PUT', `/backend/users/${id}`, { key, body: { role: 'admin' } });
      const answers = await Promise.all([demote(org.userId, org.key), demote(second.id, second.key)]);
      expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
      const owners = await api.db.prisma.user.count({ where: { tenant_id: org.tenantId, role: 'owner', deleted_at: null } });
      expect(owners).toBe(1);
    }
  });
});

describe('bootstrap key and keygen', () => {
  it('refuses a BOOTSTRAP_API_KEY that is not a well-formed key, naming the keygen command', () => {
    const good = generateApiKey();
    const broken = good.slice(0, -1) + (good.endsWith('A') ? 'B' : 'A');
    for (const bad of [broken, 'fnl_' + 'a'.repeat(38), 'my-chosen-bootstrap-key-123']) {
      expect(() => loadConfig({ BOOTSTRAP_API_KEY: bad }), bad).toThrow(/BOOTSTRAP_API_KEY.*npm run cli -- keygen/);
    }
    expect(loadConfig({ BOOTSTRAP_API_KEY: good }).bootstrapApiKey).toBe(good);
  });

  it('`npm run cli -- keygen` prints a fresh well-formed key, without a database', async () => {
    const run = promisify(execFile);
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'keygen'], {
      env: { ...process.env, BOOTSTRAP_API_KEY: 'not-a-key-at-all-0000' },
    });
    const key = stdout.trim();
    expect(isGeneratedKey(key)).toBe(true);
    expect(loadConfig({ BOOTSTRAP_API_KEY: key }).bootstrapApiKey).toBe(key);
  });
});
