// Leads (envelope style): every rule of POST /backend/leads, and the read/update/delete operations
// decisions.md adds.
import { describe, expect, it } from 'vitest';
import { useTestApp, type Org } from '../helpers/app.js';

const api = useTestApp();

async function setup(): Promise<{ org: Org; tagId: string; statusId: string }> {
  const org = await api.newOrg();
  const tag = await api.rest('POST', '/backend/tags', { key: org.key, body: { name: 'vip', color: '#f59e0b' } });
  const status = await api.rest('POST', '/backend/lead-statuses', { key: org.key, body: { name: 'Novo', color: '#3b82f6' } });
  return { org, tagId: tag.body.data.id, statusId: status.body.data.id };
}

describe('POST /backend/leads', () => {
  it('creates a lead with status, tags and custom fields, in the spec shape', async () => {
    const { org, tagId, statusId } = await setup();
    const r = await api.rest('POST', '/backend/leads', {
      key: org.key,
      body: {
        name: 'Ana Souza',
        phone: '+55 11 99999-8888',
        email: 'ana@example.com',
        company: 'ACME',
        status_id: statusId,
        tag_ids: [tagId],
        custom_fields: { plano: 'pro', seats: 5 },
      },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      success: true,
      data: expect.objectContaining({
        id: expect.any(String),
        name: 'Ana Souza',
        phone: '+5511999998888',
        email: 'ana@example.com',
        company: 'ACME',
        status: expect.objectContaining({ id: statusId, name: 'Novo', color: '#3b82f6' }),
        tags: [expect.objectContaining({ id: tagId, name: 'vip', color: '#f59e0b' })],
        custom_fields: { plano: 'pro', seats: 5 },
        created_at: expect.any(String),
      }),
    });
  });

  it('refuses invalid data with 400 VALIDATION_ERROR and creates nothing', async () => {
    const { org } = await setup();
    // Each names the field that was wrong (decisions.md: `error.details`).
    const cases: [string, unknown, string][] = [
      ['missing name', { phone: '+5511999998888' }, 'name'],
      ['empty name', { name: '  ', phone: '+5511999998888' }, 'name'],
      ['missing phone', { name: 'A' }, 'phone'],
      ['phone without country code', { name: 'A', phone: '11999998888' }, 'phone'],
      ['phone too short', { name: 'A', phone: '+5511' }, 'phone'],
      ['phone with letters', { name: 'A', phone: '+55119999abcd' }, 'phone'],
      ['bad email', { name: 'A', phone: '+5511999998888', email: 'not-an-email' }, 'email'],
      ['custom_fields not an object', { name: 'A', phone: '+5511999998888', custom_fields: [1, 2] }, 'custom_fields'],
      ['tag_ids not uuids', { name: 'A', phone: '+5511999998888', tag_ids: ['x'] }, 'tag_ids[0]'],
    ];
    for (const [name, body, field] of cases) {
      const r = await api.rest('POST', '/backend/leads', { key: org.key, body });
      expect(r.status, name).toBe(400);
      expect(r.body, name).toEqual({
        success: false,
        error: { code: 'VALIDATION_ERROR', message: expect.any(String), details: [{ field, message: expect.any(String) }] },
      });
    }
    expect(await api.db.prisma.lead.count({ where: { tenant_id: org.tenantId } })).toBe(0);
  });

  it('refuses a phone already used in the organisation with 409 ALREADY_EXISTS (other organisations may reuse it)', async () => {
    const { org } = await setup();
    const other = await api.newOrg();
    expect((await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'A', phone: '+5511999990000' } })).status).toBe(200);
    const dup = await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'B', phone: '+55 (11) 99999-0000' } });
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({ success: false, error: { code: 'ALREADY_EXISTS', message: expect.any(String) } });
    expect((await api.rest('POST', '/backend/leads', { key: other.key, body: { name: 'B', phone: '+5511999990000' } })).status).toBe(200);
  });

  it('answers an unknown status or tag with 404 NOT_FOUND and creates nothing', async () => {
    const { org, tagId } = await setup();
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const body of [
      { name: 'A', phone: '+5511999991111', status_id: unknown },
      { name: 'A', phone: '+5511999991111', tag_ids: [tagId, unknown] },
    ]) {
      const r = await api.rest('POST', '/backend/leads', { key: org.key, body });
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: expect.any(String) } });
    }
    expect(await api.db.prisma.lead.count({ where: { tenant_id: org.tenantId } })).toBe(0);
  });

  it('accepts the same operation as multipart/form-data', async () => {
    const { org, tagId } = await setup();
    const form = new FormData();
    form.set('name', 'Form Lead');
    form.set('phone', '+5511988887777');
    form.append('tag_ids', tagId);
    form.set('custom_fields', JSON.stringify({ origem: 'site' }));
    const r = await api.rest('POST', '/backend/leads', { key: org.key, body: form });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      name: 'Form Lead',
      phone: '+5511988887777',
      custom_fields: { origem: 'site' },
      tags: [{ id: tagId }],
    });
  });
});

describe('lead reads and changes', () => {
  it('lists with search and offset pagination', async () => {
    const { org } = await setup();
    for (let i = 0; i < 5; i++)
      await api.rest('POST', '/backend/leads', {
        key: org.key,
        body: { name: `Lead ${i}`, phone: `+551190000000${i}`, company: i % 2 ? 'Globex' : 'Initech' },
      });
    const page = await api.rest('GET', '/backend/leads?limit=2&offset=1', { key: org.key });
    expect(page.status).toBe(200);
    expect(page.body.success).toBe(true);
    expect(page.body.data.map((l: any) => l.name)).toEqual(['Lead 3', 'Lead 2']);
    expect(page.body.pagination).toEqual({ total: 5, limit: 2, offset: 1, has_more: true, next_cursor: null });
    const search = await api.rest('GET', '/backend/leads?search=globex', { key: org.key });
    expect(search.body.data).toHaveLength(2);
    expect(search.body.pagination).toEqual({ total: 2, limit: 20, offset: 0, has_more: false, next_cursor: null });
    const fallback = await api.rest('GET', '/backend/leads?limit=500', { key: org.key });
    expect(fallback.body.pagination.limit).toBe(20);
  });

  it('updates only the fields sent, replaces tags, and keeps the phone unique', async () => {
    const { org, tagId, statusId } = await setup();
    const a = await api.rest('POST', '/backend/leads', {
      key: org.key,
      body: { name: 'A', phone: '+5511911111111', email: 'a@example.com', tag_ids: [tagId] },
    });
    await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'B', phone: '+5511922222222' } });
    const id = a.body.data.id;
    const r = await api.rest('PUT', `/backend/leads/${id}`, { key: org.key, body: { company: 'Nova', status_id: statusId, tag_ids: [] } });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ name: 'A', email: 'a@example.com', company: 'Nova', status: { id: statusId }, tags: [] });
    const cleared = await api.rest('PUT', `/backend/leads/${id}`, { key: org.key, body: { email: null, status_id: null } });
    expect(cleared.status).toBe(200);
    expect(cleared.body.data).toMatchObject({ name: 'A', email: null, company: 'Nova', status: null });
    const nullName = await api.rest('PUT', `/backend/leads/${id}`, { key: org.key, body: { name: null } });
    expect(nullName.status).toBe(400);
    expect(nullName.body.error.code).toBe('VALIDATION_ERROR');
    const dup = await api.rest('PUT', `/backend/leads/${id}`, { key: org.key, body: { phone: '+5511922222222' } });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('ALREADY_EXISTS');
    expect((await api.rest('GET', `/backend/leads/${id}`, { key: org.key })).body.data.phone).toBe('+5511911111111');
  });

  it('deletes a lead; a lead with deals is a 409 CONFLICT', async () => {
    const { org } = await setup();
    const a = await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'A', phone: '+5511933333333' } });
    const del = await api.rest('DELETE', `/backend/leads/${a.body.data.id}`, { key: org.key });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ success: true });
    const again = await api.rest('GET', `/backend/leads/${a.body.data.id}`, { key: org.key });
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('NOT_FOUND');

    const b = await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'B', phone: '+5511944444444' } });
    const group = await api.db.prisma.pipelineGroup.create({ data: { tenant_id: org.tenantId, name: 'G', position: 0 } });
    const pipeline = await api.db.prisma.pipeline.create({
      data: { tenant_id: org.tenantId, group_id: group.id, name: 'P', position: 0, loss_reasons: [] },
    });
    const stage = await api.db.prisma.stage.create({ data: { tenant_id: org.tenantId, pipeline_id: pipeline.id, name: 'S', position: 0 } });
    await api.db.prisma.deal.create({
      data: { tenant_id: org.tenantId, number: 1, pipeline_id: pipeline.id, stage_id: stage.id, lead_id: b.body.data.id },
    });
    const blocked = await api.rest('DELETE', `/backend/leads/${b.body.data.id}`, { key: org.key });
    expect(blocked.status).toBe(409);
    expect(blocked.body).toEqual({ success: false, error: { code: 'CONFLICT', message: expect.any(String) } });
    expect((await api.rest('GET', `/backend/leads/${b.body.data.id}`, { key: org.key })).status).toBe(200);
  });
});

describe('tags and lead statuses', () => {
  it('PUT /backend/tags/{id} changes name and/or color and answers {success, data: {id, name, color, updated_at}}', async () => {
    const { org, tagId } = await setup();
    const before = (await api.rest('GET', '/backend/tags', { key: org.key })).body.data[0];
    const r = await api.rest('PUT', `/backend/tags/${tagId}`, { key: org.key, body: { color: '#10b981' } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      success: true,
      data: expect.objectContaining({ id: tagId, name: 'vip', color: '#10b981', updated_at: expect.any(String) }),
    });
    expect(new Date(r.body.data.updated_at) >= new Date(before.updated_at)).toBe(true);
    const renamed = await api.rest('PUT', `/backend/tags/${tagId}`, { key: org.key, body: { name: 'VIP+' } });
    expect(renamed.body.data).toMatchObject({ name: 'VIP+', color: '#10b981' });
    const bad = await api.rest('PUT', `/backend/tags/${tagId}`, { key: org.key, body: { color: 'green' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_ERROR');
    expect((await api.rest('GET', '/backend/tags', { key: org.key })).body.data[0]).toMatchObject({ name: 'VIP+', color: '#10b981' });
  });

  it('deletes a tag and detaches it from leads', async () => {
    const { org, tagId } = await setup();
    const lead = await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'A', phone: '+5511955555555', tag_ids: [tagId] } });
    const del = await api.rest('DELETE', `/backend/tags/${tagId}`, { key: org.key });
    expect(del.body).toEqual({ success: true });
    expect((await api.rest('GET', `/backend/leads/${lead.body.data.id}`, { key: org.key })).body.data.tags).toEqual([]);
    expect((await api.rest('DELETE', `/backend/tags/${tagId}`, { key: org.key })).status).toBe(404);
  });

  it('creates and lists lead statuses', async () => {
    const { org } = await setup();
    const r = await api.rest('POST', '/backend/lead-statuses', { key: org.key, body: { name: 'Qualificado', color: '#22c55e' } });
    expect(r.status).toBe(201);
    const list = await api.rest('GET', '/backend/lead-statuses', { key: org.key });
    expect(list.body.data.map((s: any) => s.name)).toEqual(['Novo', 'Qualificado']);
  });
});

describe('N+1', () => {
  it('a page of leads with tags and status costs the same statements for 2 or 20 leads', async () => {
    const { org, tagId, statusId } = await setup();
    for (let i = 0; i < 20; i++)
      await api.rest('POST', '/backend/leads', {
        key: org.key,
        body: { name: `L${i}`, phone: `+55119800000${String(i).padStart(2, '0')}`, tag_ids: [tagId], status_id: statusId },
      });
    const small = await api.countStatements(() => api.rest('GET', '/backend/leads?limit=2', { key: org.key }));
    const large = await api.countStatements(() => api.rest('GET', '/backend/leads?limit=20', { key: org.key }));
    expect(large).toBe(small);
    expect(small).toBeLessThanOrEqual(6);
  });
});
