// Activities (todos) and history, as decisions.md lists them: they feed pending_todos/overdue_todos
// and the timeline.
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { dealRequests, useOrgWithPipeline } from '../helpers/factories.js';

const api = useTestApp();

const { org, p, lead } = useOrgWithPipeline(api, { name: 'Ana' });
const { newDeal, get } = dealRequests(api, { org, p, lead });

const addActivity = (dealId: string, body: unknown, key = org.key) =>
  api.rest('POST', `/backend/pipeline/deals/${dealId}/activities`, { key, body });

describe('activities', () => {
  it('creates, lists, edits and deletes todos; counts follow', async () => {
    const d = await newDeal();
    const past = new Date(Date.now() - 3_600_000).toISOString();
    const future = new Date(Date.now() + 86_400_000).toISOString();
    const a1 = await addActivity(d.id, { title: 'Ligar', due_at: past });
    expect(a1.status).toBe(201);
    expect(a1.body).toMatchObject({ deal_id: d.id, title: 'Ligar', due_at: past, done: false, overdue: true });
    const a2 = await addActivity(d.id, { title: 'Enviar proposta', due_at: future });
    const a3 = await addActivity(d.id, { title: 'Sem data' });
    expect(a3.body.due_at).toBeNull();
    await addActivity(d.id, { title: 'Feito', done: true, due_at: past });
    expect(await get(d.id)).toMatchObject({ pending_todos: 3, overdue_todos: 1 });

    const listed = await api.rest('GET', `/backend/pipeline/deals/${d.id}/activities`, { key: org.key });
    expect(listed.status).toBe(200);
    expect(listed.body.map((a: any) => a.title)).toEqual(['Ligar', 'Enviar proposta', 'Sem data', 'Feito']);

    const done = await api.rest('PUT', `/backend/pipeline/activities/${a1.body.id}`, { key: org.key, body: { done: true } });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ id: a1.body.id, title: 'Ligar', done: true, overdue: false });
    const moved = await api.rest('PUT', `/backend/pipeline/activities/${a2.body.id}`, {
      key: org.key,
      body: { due_at: past, title: 'Proposta' },
    });
    expect(moved.body).toMatchObject({ title: 'Proposta', due_at: past, done: false });
    expect(await get(d.id)).toMatchObject({ pending_todos: 2, overdue_todos: 1 });

    const del = await api.rest('DELETE', `/backend/pipeline/activities/${a2.body.id}`, { key: org.key });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ success: true });
    expect(await get(d.id)).toMatchObject({ pending_todos: 1, overdue_todos: 0 });
    expect((await api.rest('DELETE', `/backend/pipeline/activities/${a2.body.id}`, { key: org.key })).status).toBe(404);
  });

  it('validates input and ids; another organisation sees 404', async () => {
    const d = await newDeal();
    const noTitle = await addActivity(d.id, { due_at: new Date().toISOString() });
    expect(noTitle.status).toBe(400);
    expect(noTitle.body.code).toBe('ERR_INVALID_INPUT');
    expect((await addActivity(d.id, { title: '  ' })).status).toBe(400);
    expect((await addActivity(d.id, { title: 'x', due_at: 'amanhã' })).status).toBe(400);
    expect((await addActivity('00000000-0000-4000-8000-000000000000', { title: 'x' })).status).toBe(404);
    const a = (await addActivity(d.id, { title: 'Mine' })).body;
    const other = await api.newOrg('Other');
    expect((await api.rest('PUT', `/backend/pipeline/activities/${a.id}`, { key: other.key, body: { done: true } })).status).toBe(404);
    expect((await api.rest('GET', `/backend/pipeline/deals/${d.id}/activities`, { key: other.key })).status).toBe(404);
    expect((await addActivity(d.id, { title: 'x' }, other.key)).status).toBe(404);
  });

  it('view-only keys read but cannot write (403)', async () => {
    const d = await newDeal();
    const viewer = await api.keyFor(org, 'admin', ['pipeline.view']);
    expect((await api.rest('GET', `/backend/pipeline/deals/${d.id}/activities`, { key: viewer })).status).toBe(200);
    const r = await addActivity(d.id, { title: 'x' }, viewer);
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('ERR_FORBIDDEN');
    const operator = await api.keyFor(org, 'operator');
    expect((await addActivity(d.id, { title: 'op' }, operator)).status).toBe(201);
  });
});

describe('history', () => {
  it('records creation, moves, won/lost, value and product changes with actor and time, oldest first', async () => {
    const d = await newDeal({ value: 10 });
    const operator = await api.keyFor(org, 'operator');
    await api.rest('PUT', `/backend/pipeline/deals/${d.id}/stage`, { key: operator, body: { stage_id: p.andamento } });
    await api.rest('PUT', `/backend/pipeline/deals/${d.id}`, { key: org.key, body: { value: 20 } });
    await api.rest('PUT', `/backend/pipeline/deals/${d.id}`, { key: org.key, body: { products: [{ name: 'A', price: 5, qty: 2 }] } });
    await api.rest('PUT', `/backend/pipeline/deals/${d.id}/stage`, { key: org.key, body: { stage_id: p.perdido, loss_reason: 'Preço' } });
    await api.rest('PUT', `/backend/pipeline/deals/${d.id}/stage`, { key: org.key, body: { stage_id: p.ganho } });
    await api.rest('PUT', `/backend/pipeline/deals/${d.id}`, { key: org.key, body: { note: 'n' } });
    // refused changes leave no trace
    await api.rest('PUT', `/backend/pipeline/deals/${d.id}/stage`, { key: org.key, body: { stage_id: p.perdido } });

    const r = await api.rest('GET', `/backend/pipeline/deals/${d.id}/history`, { key: org.key });
    expect(r.status).toBe(200);
    expect(r.body.map((e: any) => e.type)).toEqual([
      'created',
      'stage_changed',
      'value_changed',
      'products_changed',
      'lost',
      'won',
      'updated',
    ]);
    const [created, moved, value, products, lost, won, updated] = r.body;
    expect(created).toMatchObject({ deal_id: d.id, to_stage_id: p.entrada, actor_id: org.userId, actor_name: 'Owner' });
    expect(moved).toMatchObject({
      from_stage_id: p.entrada,
      to_stage_id: p.andamento,
      data: { from_stage_name: 'Entrada', to_stage_name: 'Em andamento' },
    });
    expect(moved.actor_id).not.toBe(org.userId);
    expect(moved.actor_name).toBe('operator user');
    expect(value.data).toEqual({ from: 10, to: 20 });
    expect(products.data).toMatchObject({ from_lines: 0, to_lines: 1, from_total: 20, to_total: 10 });
    expect(lost).toMatchObject({ from_stage_id: p.andamento, to_stage_id: p.perdido, data: { loss_reason: 'Preço' } });
    expect(won).toMatchObject({ from_stage_id: p.perdido, to_stage_id: p.ganho });
    expect(updated.data).toEqual({ fields: ['note'] });
    expect(Date.parse(created.created_at)).toBeLessThanOrEqual(Date.parse(updated.created_at));
  });

  it('404 for an unknown deal', async () => {
    const r = await api.rest('GET', '/backend/pipeline/deals/00000000-0000-4000-8000-000000000000/history', { key: org.key });
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('ERR_NOT_FOUND');
  });
});
