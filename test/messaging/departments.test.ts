import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { addMember, makeDepartment, makeUser } from './helpers.js';

const api = useTestApp();

describe('departments', () => {
  it('creates, lists, renames and deletes; names are unique per organisation and at most 100 characters', async () => {
    const org = await api.newOrg();
    const created = await api.rest('POST', '/backend/departments', {
      key: org.key,
      body: { name: ' Vendas ', description: 'Time comercial' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      tenant_id: org.tenantId,
      name: 'Vendas',
      description: 'Time comercial',
      routing: 'manual',
      member_count: 0,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const suporte = await makeDepartment(api, org, 'Suporte');

    const dup = await api.rest('POST', '/backend/departments', { key: org.key, body: { name: 'Vendas' } });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('ERR_CONFLICT');
    const renamedToDup = await api.rest('PUT', `/backend/departments/${suporte.id}`, { key: org.key, body: { name: 'Vendas' } });
    expect(renamedToDup.status).toBe(409);
    expect(renamedToDup.body.code).toBe('ERR_CONFLICT');

    expect((await api.rest('POST', '/backend/departments', { key: org.key, body: { name: 'x'.repeat(100) } })).status).toBe(201);
    const tooLong = await api.rest('POST', '/backend/departments', { key: org.key, body: { name: 'y'.repeat(101) } });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.code).toBe('ERR_INVALID_INPUT');
    expect((await api.rest('POST', '/backend/departments', { key: org.key, body: { name: '  ' } })).status).toBe(400);
    expect((await api.rest('POST', '/backend/departments', { key: org.key, body: {} })).status).toBe(400);
    expect((await api.rest('POST', '/backend/departments', { key: org.key, body: { name: 7 } })).status).toBe(400);

    // Another organisation may use the same name.
    const other = await api.newOrg();
    expect((await api.rest('POST', '/backend/departments', { key: other.key, body: { name: 'Vendas' } })).status).toBe(201);

    const renamed = await api.rest('PUT', `/backend/departments/${suporte.id}`, { key: org.key, body: { name: 'Atendimento' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: suporte.id, name: 'Atendimento', description: null, member_count: 0 });
    const described = await api.rest('PUT', `/backend/departments/${suporte.id}`, { key: org.key, body: { description: 'Pós-venda' } });
    expect(described.body).toMatchObject({ name: 'Atendimento', description: 'Pós-venda' });
    const sameName = await api.rest('PUT', `/backend/departments/${suporte.id}`, { key: org.key, body: { name: 'Atendimento' } });
    expect(sameName.status).toBe(200);

    const list = await api.rest('GET', '/backend/departments', { key: org.key });
    expect(list.status).toBe(200);
    expect(list.body.data.map((d: { name: string }) => d.name)).toEqual(['Atendimento', 'Vendas', 'x'.repeat(100)]);

    expect((await api.rest('DELETE', `/backend/departments/${suporte.id}`, { key: org.key })).status).toBe(204);
    const gone = await api.rest('DELETE', `/backend/departments/${suporte.id}`, { key: org.key });
    expect(gone.status).toBe(404);
    expect(gone.body.code).toBe('ERR_NOT_FOUND');
    expect((await api.rest('PUT', `/backend/departments/${suporte.id}`, { key: org.key, body: { name: 'Z' } })).status).toBe(404);
    expect((await api.rest('PUT', '/backend/departments/not-a-uuid', { key: org.key, body: { name: 'Z' } })).status).toBe(400);
  });

  it('adds and removes members who are users of the organisation; member_count follows', async () => {
    const org = await api.newOrg();
    const dept = await makeDepartment(api, org, 'Vendas');
    const ana = await makeUser(api, org, 'operator');
    const bia = await makeUser(api, org, 'admin');

    const added = await api.rest('POST', `/backend/departments/${dept.id}/members`, { key: org.key, body: { user_id: ana.id } });
    expect(added.status).toBe(200);
    expect(added.body).toEqual({ message: expect.any(String) });
    const again = await api.rest('POST', `/backend/departments/${dept.id}/members`, { key: org.key, body: { user_id: ana.id } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('ERR_CONFLICT');
    await addMember(api, org, dept.id, bia.id);

    const members = await api.rest('GET', `/backend/departments/${dept.id}/members`, { key: org.key });
    expect(members.status).toBe(200);
    expect(members.body.data).toEqual([
      {
        id: expect.any(String),
        department_id: dept.id,
        user_id: ana.id,
        user_name: expect.stringContaining('operator'),
        user_email: expect.stringContaining('@example.com'),
        created_at: expect.any(String),
      },
      expect.objectContaining({ user_id: bia.id }),
    ]);
    const list = await api.rest('GET', '/backend/departments', { key: org.key });
    expect(list.body.data[0].member_count).toBe(2);

    // A user of another organisation, or no user at all, is not found.
    const other = await api.newOrg();
    const stranger = await api.rest('POST', `/backend/departments/${dept.id}/members`, { key: org.key, body: { user_id: other.userId } });
    expect(stranger.status).toBe(404);
    expect(stranger.body.code).toBe('ERR_NOT_FOUND');
    expect((await api.rest('POST', `/backend/departments/${dept.id}/members`, { key: org.key, body: { user_id: 'nope' } })).status).toBe(
      400,
    );
    expect((await api.rest('POST', `/backend/departments/${dept.id}/members`, { key: org.key, body: {} })).status).toBe(400);

    expect((await api.rest('DELETE', `/backend/departments/${dept.id}/members/${ana.id}`, { key: org.key })).status).toBe(204);
    expect((await api.rest('DELETE', `/backend/departments/${dept.id}/members/${ana.id}`, { key: org.key })).status).toBe(404);
    expect((await api.rest('GET', '/backend/departments', { key: org.key })).body.data[0].member_count).toBe(1);

    // Deleting the department removes its memberships.
    expect((await api.rest('DELETE', `/backend/departments/${dept.id}`, { key: org.key })).status).toBe(204);
    expect((await api.rest('GET', `/backend/departments/${dept.id}/members`, { key: org.key })).status).toBe(404);
    expect((await api.rest('GET', '/backend/departments/my', { key: bia.key })).body.data).toEqual([]);
  });

  it('lists all departments for owner and admin only, and one’s own departments for every role', async () => {
    const org = await api.newOrg();
    const vendas = await makeDepartment(api, org, 'Vendas');
    await makeDepartment(api, org, 'Suporte');
    const operator = await makeUser(api, org, 'operator');
    const admin = await makeUser(api, org, 'admin');
    await addMember(api, org, vendas.id, operator.id);

    const refused = await api.rest('GET', '/backend/departments', { key: operator.key });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('ERR_FORBIDDEN');
    expect((await api.rest('GET', '/backend/departments', { key: admin.key })).body.data).toHaveLength(2);

    const mine = await api.rest('GET', '/backend/departments/my', { key: operator.key });
    expect(mine.status).toBe(200);
    expect(mine.body.data).toEqual([expect.objectContaining({ id: vendas.id, name: 'Vendas', member_count: 1 })]);
    expect((await api.rest('GET', '/backend/departments/my', { key: admin.key })).body.data).toEqual([]);

    for (const [method, path, body] of [
      ['POST', '/backend/departments', { name: 'X' }],
      ['PUT', `/backend/departments/${vendas.id}`, { name: 'X' }],
      ['DELETE', `/backend/departments/${vendas.id}`, undefined],
      ['GET', `/backend/departments/${vendas.id}/members`, undefined],
      ['POST', `/backend/departments/${vendas.id}/members`, { user_id: operator.id }],
      ['DELETE', `/backend/departments/${vendas.id}/members/${operator.id}`, undefined],
    ] as const) {
      const r = await api.rest(method, path, { key: operator.key, body });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body.code).toBe('ERR_FORBIDDEN');
    }
    // Nothing changed.
    expect((await api.rest('GET', `/backend/departments/${vendas.id}/members`, { key: org.key })).body.data).toHaveLength(1);
  });

  it('keeps organisations apart: another organisation’s department is not found and stays unchanged', async () => {
    const org = await api.newOrg();
    const other = await api.newOrg();
    const theirs = await makeDepartment(api, other, 'Deles');
    const me = await makeUser(api, org, 'operator');
    for (const [method, path, body] of [
      ['PUT', `/backend/departments/${theirs.id}`, { name: 'Meu' }],
      ['DELETE', `/backend/departments/${theirs.id}`, undefined],
      ['GET', `/backend/departments/${theirs.id}/members`, undefined],
      ['POST', `/backend/departments/${theirs.id}/members`, { user_id: me.id }],
      ['DELETE', `/backend/departments/${theirs.id}/members/${me.id}`, undefined],
    ] as const) {
      const r = await api.rest(method, path, { key: org.key, body });
      expect(r.status, `${method} ${path}`).toBe(404);
    }
    expect((await api.rest('GET', '/backend/departments', { key: org.key })).body.data).toEqual([]);
    expect((await api.rest('GET', '/backend/departments', { key: other.key })).body.data).toEqual([
      expect.objectContaining({ id: theirs.id, name: 'Deles', member_count: 0 }),
    ]);
  });

  it('serves the same operations on GraphQL, with Department.members', async () => {
    const org = await api.newOrg();
    const dept = await makeDepartment(api, org, 'Vendas');
    const ana = await makeUser(api, org, 'operator');
    await addMember(api, org, dept.id, ana.id);
    const r = await api.raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ana.key}` },
      body: JSON.stringify({ query: '{ myDepartments { data { name member_count members { user_id user_name } } } }' }),
    });
    const body = await r.json();
    expect(body.errors).toBeUndefined();
    expect(body.data.myDepartments.data).toEqual([
      { name: 'Vendas', member_count: 1, members: [{ user_id: ana.id, user_name: expect.any(String) }] },
    ]);
  });
});
