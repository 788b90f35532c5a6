// The caps GraphQL counts lists at are enforced on write (decisions.md "Bounded work"): 50 stages in a
// pipeline, 100 members in a department (400 above). Tags: test/leads/many-tags.test.ts.
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { makePipeline } from '../helpers/factories.js';
import { addMember, makeDepartment } from '../messaging/helpers.js';

const api = useTestApp();

describe('caps enforced on write', () => {
  it('a pipeline holds at most 50 stages: a save of 51 and a 51st stage are 400', async () => {
    const org = await api.newOrg();
    const p = await makePipeline(api, org);
    const stages = (n: number) => [
      ...p.stages.map((s) => ({ id: s.id, name: s.name })),
      ...Array.from({ length: n - 4 }, (_, i) => ({ name: `E${i}` })),
    ];
    const over = await api.rest('PUT', `/backend/pipelines/${p.id}`, { key: org.key, body: { name: 'Vendas', stages: stages(51) } });
    expect(over.status).toBe(400);
    expect(over.body.code).toBe('ERR_INVALID_INPUT');
    expect(
      (await api.rest('PUT', `/backend/pipelines/${p.id}`, { key: org.key, body: { name: 'Vendas', stages: stages(50) } })).status,
    ).toBe(200);
    const one = await api.rest('POST', `/backend/pipelines/${p.id}/stages`, { key: org.key, body: { name: 'Mais uma' } });
    expect(one.status).toBe(400);
    expect(one.body.code).toBe('ERR_INVALID_INPUT');
  });

  it('a department holds at most 100 members: the 101st is 400', async () => {
    const org = await api.newOrg();
    const department = await makeDepartment(api, org, 'Grande');
    const prisma = api.db.prisma;
    await prisma.user.createMany({
      data: Array.from({ length: 101 }, (_, i) => ({
        tenant_id: org.tenantId,
        name: `m${i}`,
        email: `m${i}@example.com`,
        role: 'operator' as const,
      })),
    });
    const users = await prisma.user.findMany({
      where: { tenant_id: org.tenantId, email: { startsWith: 'm' } },
      orderBy: { email: 'asc' },
      select: { id: true },
    });
    await prisma.departmentMember.createMany({
      data: users.slice(0, 99).map((u) => ({ tenant_id: org.tenantId, department_id: department.id, user_id: u.id })),
    });
    await addMember(api, org, department.id, users[99].id);
    const over = await api.rest('POST', `/backend/departments/${department.id}/members`, {
      key: org.key,
      body: { user_id: users[100].id },
    });
    expect(over.status).toBe(400);
    expect(over.body.code).toBe('ERR_INVALID_INPUT');
  });
});
