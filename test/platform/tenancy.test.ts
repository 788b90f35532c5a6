// Tenant isolation: every id of organisation B used with organisation A's key is a 404, and nothing of
// B changes. (Pipelines and deals have their own isolation tests in their folders.)
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';

const api = useTestApp();

async function snapshot(tenantId: string) {
  const p = api.db.prisma;
  const where = { tenant_id: tenantId };
  return {
    leads: await p.lead.findMany({ where, orderBy: { id: 'asc' } }),
    leadTags: await p.leadTag.findMany({ where, orderBy: [{ lead_id: 'asc' }, { tag_id: 'asc' }] }),
    tags: await p.tag.findMany({ where, orderBy: { id: 'asc' } }),
    statuses: await p.leadStatus.findMany({ where, orderBy: { id: 'asc' } }),
    keys: await p.apiKey.findMany({ where, orderBy: { id: 'asc' }, omit: { last_used_at: true } }),
    users: await p.user.findMany({ where, orderBy: { id: 'asc' } }),
  };
}

describe('tenant isolation', () => {
  it('answers 404 for every id of another organisation and changes nothing', async () => {
    const a = await api.newOrg('A');
    const b = await api.newOrg('B');
    const bTag = (await api.rest('POST', '/backend/tags', { key: b.key, body: { name: 'b-tag', color: '#111111' } })).body.data;
    const bStatus = (await api.rest('POST', '/backend/lead-statuses', { key: b.key, body: { name: 'b-status', color: '#222222' } })).body.data;
    const bLead = (await api.rest('POST', '/backend/leads', { key: b.key, body: { name: 'B lead', phone: '+5511977777777', tag_ids: [bTag.id], status_id: bStatus.id } })).body.data;
    const bKey = (await api.rest('POST', '/backend/api-keys', { key: b.key, body: { name: 'b key' } })).body.data;
    const before = await snapshot(b.tenantId);

    const attempts: [string, string, unknown?][] = [
      ['GET', `/backend/leads/${bLead.id}`],
      ['PUT', `/backend/leads/${bLead.id}`, { name: 'hijacked' }],
      ['DELETE', `/backend/leads/${bLead.id}`],
      ['PUT', `/backend/tags/${bTag.id}`, { name: 'hijacked' }],
      ['DELETE', `/backend/tags/${bTag.id}`],
      ['POST', `/backend/api-keys/${bKey.id}/revoke`],
      ['DELETE', `/backend/api-keys/${bKey.id}`],
      ['POST', '/backend/api-keys', { name: 'for b user', user_id: b.userId }],
      ['POST', '/backend/leads', { name: 'x', phone: '+5511966666666', tag_ids: [bTag.id] }],
      ['POST', '/backend/leads', { name: 'x', phone: '+5511966666666', status_id: bStatus.id }],
    ];
    for (const [method, path, body] of attempts) {
      const r = await api.rest(method, path, { key: a.key, body });
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body, `${method} ${path}`).toEqual({ success: false, error: { code: 'NOT_FOUND', message: expect.any(String) } });
    }
    // GraphQL answers the same.
    const g = await api.raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${a.key}` },
      body: JSON.stringify({ query: 'query($id: UUID!) { lead(id: $id) { id } }', variables: { id: bLead.id } }),
    });
    expect((await g.json()).errors[0].extensions).toMatchObject({ code: 'NOT_FOUND', status: 404 });

    expect(await snapshot(b.tenantId)).toEqual(before);
    // A's lists do not show B's rows.
    expect((await api.rest('GET', '/backend/leads', { key: a.key })).body.data).toEqual([]);
    expect((await api.rest('GET', '/backend/tags', { key: a.key })).body.data).toEqual([]);
    expect((await api.rest('GET', '/backend/users', { key: a.key })).body.data.map((u: any) => u.id)).toEqual([a.userId]);
    // And B's key still works.
    expect((await api.rest('GET', `/backend/leads/${bLead.id}`, { key: b.key })).status).toBe(200);
  });

  it('the database refuses a row that points into another organisation', async () => {
    const a = await api.newOrg('A');
    const b = await api.newOrg('B');
    const bTag = (await api.rest('POST', '/backend/tags', { key: b.key, body: { name: 't', color: '#333333' } })).body.data;
    const aLead = (await api.rest('POST', '/backend/leads', { key: a.key, body: { name: 'A', phone: '+5511955554444' } })).body.data;
    await expect(api.db.prisma.leadTag.create({ data: { tenant_id: a.tenantId, lead_id: aLead.id, tag_id: bTag.id } })).rejects.toThrow();
  });
});
