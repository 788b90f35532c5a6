// Leads with many tags (decisions.md "Bounded work"): a page of 100 leads × 100 tags is served, and no
// statement binds more than a few thousand parameters (Prisma's relation loading bound one per pair:
// 100 × 700 passed PostgreSQL's 65,535 and made the page a 500). A lead or a deal holds at most 100 tags.
import { beforeAll, describe, expect, it } from 'vitest';
import { totalStatements } from '../../src/db/statements.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { makeLead, useOrgWithPipeline } from '../helpers/factories.js';

const api = useTestApp();
const MOST_PARAMETERS = 2000;

let org: Org;
let tagIds: string[];

beforeAll(async () => {
  org = await api.newOrg();
  const prisma = api.db.prisma;
  await prisma.tag.createMany({
    data: Array.from({ length: 101 }, (_, i) => ({ tenant_id: org.tenantId, name: `t${String(i).padStart(3, '0')}`, color: '#22c55e' })),
  });
  tagIds = (await prisma.tag.findMany({ where: { tenant_id: org.tenantId }, orderBy: { name: 'asc' }, select: { id: true } })).map(
    (t) => t.id,
  );
  await prisma.lead.createMany({
    data: Array.from({ length: 100 }, (_, i) => ({
      tenant_id: org.tenantId,
      name: `Lead ${i}`,
      phone: `+55219${String(i).padStart(8, '0')}`,
    })),
  });
  const leads = await prisma.lead.findMany({ where: { tenant_id: org.tenantId }, select: { id: true } });
  await prisma.leadTag.createMany({
    data: leads.flatMap((l) => tagIds.slice(0, 100).map((tag_id) => ({ tenant_id: org.tenantId, lead_id: l.id, tag_id }))),
  });
}, 120_000);

describe('100 leads × 100 tags', () => {
  it('GET /backend/leads?limit=100 serves every tag, binding at most a few thousand parameters per statement', async () => {
    totalStatements.mostParameters = 0;
    const r = await api.rest('GET', '/backend/leads?limit=100', { key: org.key });
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(100);
    for (const lead of r.body.data) expect(lead.tags.map((t: { id: string }) => t.id)).toEqual(tagIds.slice(0, 100));
    expect(totalStatements.mostParameters).toBeLessThanOrEqual(MOST_PARAMETERS);
  });
});

describe('at most 100 tags', () => {
  const { org: dealOrg, p, lead } = useOrgWithPipeline(api);

  it('tag_ids over 100 entries → 400 on leads and deals; 100 are accepted', async () => {
    const over = [...tagIds, tagIds[0]]; // 102 entries
    const created = await api.rest('POST', '/backend/leads', {
      key: org.key,
      body: { name: 'Muitas', phone: '+5511988887777', tag_ids: over },
    });
    expect(created.status).toBe(400);
    expect(created.body.error.code).toBe('VALIDATION_ERROR');
    const target = await makeLead(api, org, { name: 'Alvo' });
    const updated = await api.rest('PUT', `/backend/leads/${target.id}`, { key: org.key, body: { tag_ids: tagIds } });
    expect(updated.status).toBe(400);
    expect(updated.body.error.code).toBe('VALIDATION_ERROR');
    const ok = await api.rest('PUT', `/backend/leads/${target.id}`, { key: org.key, body: { tag_ids: tagIds.slice(0, 100) } });
    expect(ok.status).toBe(200);
    expect(ok.body.data.tags).toHaveLength(100);

    const prisma = api.db.prisma;
    await prisma.tag.createMany({
      data: Array.from({ length: 101 }, (_, i) => ({ tenant_id: dealOrg.tenantId, name: `d${i}`, color: '#22c55e' })),
    });
    const dealTags = (
      await prisma.tag.findMany({ where: { tenant_id: dealOrg.tenantId }, orderBy: { name: 'asc' }, select: { id: true } })
    ).map((t) => t.id);
    const body = { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id, value: 1 };
    const deal = await api.rest('POST', '/backend/pipeline/deals', { key: dealOrg.key, body: { ...body, tag_ids: dealTags } });
    expect(deal.status).toBe(400);
    expect(deal.body.code).toBe('ERR_INVALID_INPUT');
    const full = await api.rest('POST', '/backend/pipeline/deals', {
      key: dealOrg.key,
      body: { ...body, tag_ids: dealTags.slice(0, 100) },
    });
    expect(full.status).toBe(201);
    // One more, one at a time: refused; one it already has: fine.
    const more = await api.rest('POST', `/backend/pipeline/deals/${full.body.id}/tags/${dealTags[100]}`, { key: dealOrg.key });
    expect(more.status).toBe(400);
    expect(more.body.code).toBe('ERR_INVALID_INPUT');
    expect(
      (await api.rest('POST', `/backend/pipeline/deals/${full.body.id}/tags/${dealTags[0]}`, { key: dealOrg.key })).status,
    ).toBeLessThan(300);
  });
});
