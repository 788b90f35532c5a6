// PUT /backend/pipeline/deals/{id}, PUT …/stage (every row of the state table), tags, delete, and
// catalog edits/deletes after lines exist.
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { dealRequests, makePipeline, makeProduct, makeTag, useOrgWithPipeline } from '../helpers/factories.js';

const api = useTestApp();

const { org, p, lead } = useOrgWithPipeline(api, { name: 'Ana' });
const { newDeal, get, put, move } = dealRequests(api, { org, p, lead });

describe('edit deal', () => {
  it('changes only the fields sent', async () => {
    const d = await newDeal({ value: 100, note: 'n1', origin: 'site' });
    const r = await put(d.id, { note: 'n2' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ note: 'n2', value: 100, total: 100, origin: 'site', stage_id: p.entrada, owner_id: null });
    const r2 = await put(d.id, { owner_id: org.userId, origin: 'indicação' });
    expect(r2.body).toMatchObject({ note: 'n2', owner_id: org.userId, origin: 'indicação', value: 100 });
    const empty = await put(d.id, {});
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ note: 'n2', owner_id: org.userId, origin: 'indicação', value: 100 });
  });

  it('clears owner and note when REST sends null, as GraphQL null does', async () => {
    const d = await newDeal({ value: 10, note: 'to clear', owner_id: org.userId });
    const r = await put(d.id, { owner_id: null, note: null });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ owner_id: null, note: null, value: 10 });
    expect((await get(d.id)).owner_id).toBeNull();
  });

  it('total follows value while there are no lines', async () => {
    const d = await newDeal({ value: 100 });
    const r = await put(d.id, { value: 250.25 });
    expect(r.body).toMatchObject({ value: 250.25, total: 250.25 });
  });

  it('products replaces the list, total = Σ price × qty; [] clears it and total falls back to value', async () => {
    const prod = await makeProduct(api, org, 'Licença', 10.1);
    const d = await newDeal({ value: 999, products: [{ name: 'Old', price: 1, custom: true }] });
    expect(d.total).toBe(1);
    const r = await put(d.id, {
      products: [
        { product_id: prod.id, qty: 3 },
        { name: 'Serviço', price: 0.2, qty: 2, custom: true },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body.products.map((l: any) => [l.name, l.price, l.qty, l.total])).toEqual([
      ['Licença', 10.1, 3, 30.3],
      ['Serviço', 0.2, 2, 0.4],
    ]);
    expect(r.body.total).toBe(30.7);
    expect(r.body.value).toBe(999);
    const withValue = await put(d.id, { value: 5 });
    expect(withValue.body).toMatchObject({ value: 5, total: 30.7 });
    const cleared = await put(d.id, { products: [] });
    expect(cleared.body.products).toEqual([]);
    expect(cleared.body.total).toBe(5);
    // omitted products: unchanged
    const again = await put(d.id, { products: [{ name: 'X', price: 2, qty: 2 }] });
    const noted = await put(d.id, { note: 'keep lines' });
    expect(noted.body.products).toEqual(again.body.products);
    expect(noted.body.total).toBe(4);
  });

  it('does not change the stage, and refuses bad input without changing anything', async () => {
    const d = await newDeal({ value: 10 });
    const r = await put(d.id, { stage_id: p.ganho, note: 'x' });
    expect(r.body.stage_id).toBe(p.entrada);
    for (const body of [{ value: -1 }, { products: [{ name: 'N', price: -5 }] }, { products: [{ price: 5, custom: true }] }]) {
      const bad = await put(d.id, body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body.code).toBe('ERR_INVALID_INPUT');
    }
    const missing = await put(d.id, { products: [{ product_id: '00000000-0000-4000-8000-000000000009' }] });
    expect(missing.status).toBe(404);
    const badOwner = await put(d.id, { owner_id: '00000000-0000-4000-8000-000000000009' });
    expect(badOwner.status).toBe(404);
    const after = await get(d.id);
    expect(after).toMatchObject({ value: 10, total: 10, products: [], owner_id: null, note: 'x' });
  });

  it('answers 404 for an unknown deal or a deal of another organisation', async () => {
    const other = await api.newOrg('Other');
    const d = await newDeal();
    expect((await put(d.id, { note: 'x' }, other.key)).status).toBe(404);
    const r = await put('00000000-0000-4000-8000-000000000000', { note: 'x' });
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('ERR_NOT_FOUND');
    expect((await api.rest('GET', `/backend/pipeline/deals/${d.id}`, { key: other.key })).status).toBe(404);
  });

  it('operators may edit; a view-only key gets 403', async () => {
    const d = await newDeal();
    const operator = await api.keyFor(org, 'operator');
    expect((await put(d.id, { note: 'op' }, operator)).status).toBe(200);
    const viewer = await api.keyFor(org, 'admin', ['pipeline.view']);
    const r = await put(d.id, { note: 'viewer' }, viewer);
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('ERR_FORBIDDEN');
    expect((await get(d.id)).note).toBe('op');
  });
});

describe('catalog changes after lines exist', () => {
  it('editing a catalog product keeps existing lines; deleting it turns them into one-off lines; totals unchanged', async () => {
    const prod = await makeProduct(api, org, 'Consultoria', 300);
    const d = await newDeal({ products: [{ product_id: prod.id, qty: 2 }] });
    expect(d.total).toBe(600);
    const edit = await api.rest('PUT', `/backend/pipeline/products/${prod.id}`, {
      key: org.key,
      body: { name: 'Consultoria 2', price: 500 },
    });
    expect(edit.status).toBe(200);
    let after = await get(d.id);
    expect(after.products[0]).toMatchObject({ product_id: prod.id, name: 'Consultoria', price: 300, qty: 2, custom: false });
    expect(after.total).toBe(600);
    // resending the line by id keeps its copied price; a new line copies the catalog as it is now
    const resent = await put(d.id, {
      products: [
        { id: after.products[0].id, product_id: prod.id, qty: 1 },
        { product_id: prod.id, qty: 1 },
      ],
    });
    expect(resent.body.products.map((l: any) => [l.name, l.price])).toEqual([
      ['Consultoria', 300],
      ['Consultoria 2', 500],
    ]);
    expect(resent.body.total).toBe(800);
    const del = await api.rest('DELETE', `/backend/pipeline/products/${prod.id}`, { key: org.key });
    expect(del.status).toBe(200);
    after = await get(d.id);
    expect(after.products.map((l: any) => [l.product_id, l.name, l.price, l.custom])).toEqual([
      [null, 'Consultoria', 300, true],
      [null, 'Consultoria 2', 500, true],
    ]);
    expect(after.total).toBe(800);
  });
});

describe('move deal (state table)', () => {
  it('any stage → won: sets won_at, clears lost_at and loss_reason', async () => {
    const d = await newDeal({ stage_id: p.perdido, loss_reason: 'Preço' });
    const r = await move(d.id, { stage_id: p.ganho, loss_reason: 'ignored' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ stage_id: p.ganho, lost_at: null, loss_reason: null });
    expect(Date.parse(r.body.won_at)).toBeGreaterThan(0);
  });

  it('any stage → lost with loss_reason: sets lost_at and the reason, clears won_at (free text allowed)', async () => {
    const d = await newDeal({ stage_id: p.ganho });
    const r = await move(d.id, { stage_id: p.perdido, loss_reason: 'Cliente sumiu' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ stage_id: p.perdido, won_at: null, loss_reason: 'Cliente sumiu' });
    expect(Date.parse(r.body.lost_at)).toBeGreaterThan(0);
  });

  it('→ lost without loss_reason: 400 and the deal is unchanged', async () => {
    const d = await newDeal({ stage_id: p.ganho });
    for (const body of [{ stage_id: p.perdido }, { stage_id: p.perdido, loss_reason: '' }]) {
      const r = await move(d.id, body);
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('ERR_INVALID_INPUT');
    }
    const after = await get(d.id);
    expect(after).toMatchObject({ stage_id: p.ganho, lost_at: null, loss_reason: null, won_at: d.won_at });
  });

  it('any stage → regular: won_at, lost_at and loss_reason become null', async () => {
    const lost = await newDeal({ stage_id: p.perdido, loss_reason: 'Timing' });
    const r = await move(lost.id, { stage_id: p.andamento, loss_reason: 'ignored' });
    expect(r.body).toMatchObject({ stage_id: p.andamento, won_at: null, lost_at: null, loss_reason: null });
    const won = await newDeal({ stage_id: p.ganho });
    const r2 = await move(won.id, { stage_id: p.entrada });
    expect(r2.body).toMatchObject({ stage_id: p.entrada, won_at: null, lost_at: null, loss_reason: null });
  });

  it('→ a stage of another pipeline: 400 and unchanged; unknown stage 400; unknown deal 404', async () => {
    const other = await makePipeline(api, org, 'Outro');
    const d = await newDeal({ stage_id: p.andamento });
    const r = await move(d.id, { stage_id: other.ganho });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('ERR_INVALID_INPUT');
    expect((await get(d.id)).stage_id).toBe(p.andamento);
    expect((await move(d.id, { stage_id: '00000000-0000-4000-8000-000000000000' })).status).toBe(400);
    expect((await move(d.id, {})).status).toBe(400);
    const missing = await move('00000000-0000-4000-8000-000000000000', { stage_id: p.ganho });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('ERR_NOT_FOUND');
  });

  it('lost → lost again replaces the reason; the move endpoint needs pipeline.deals.edit', async () => {
    const d = await newDeal({ stage_id: p.perdido, loss_reason: 'Preço' });
    const r = await move(d.id, { stage_id: p.perdido, loss_reason: 'Concorrência' });
    expect(r.body.loss_reason).toBe('Concorrência');
    const viewer = await api.keyFor(org, 'admin', ['pipeline.view']);
    expect((await move(d.id, { stage_id: p.entrada }, viewer)).status).toBe(403);
    expect((await get(d.id)).stage_id).toBe(p.perdido);
  });
});

describe('deal tags', () => {
  it('adds and removes tags with {success: true}; adding twice keeps one', async () => {
    const d = await newDeal();
    const t = await makeTag(api, org, 'quente');
    const add = await api.rest('POST', `/backend/pipeline/deals/${d.id}/tags/${t.id}`, { key: org.key });
    expect(add.status).toBe(200);
    expect(add.body).toEqual({ success: true });
    await api.rest('POST', `/backend/pipeline/deals/${d.id}/tags/${t.id}`, { key: org.key });
    expect((await get(d.id)).tags.map((x: any) => x.id)).toEqual([t.id]);
    const del = await api.rest('DELETE', `/backend/pipeline/deals/${d.id}/tags/${t.id}`, { key: org.key });
    expect(del.body).toEqual({ success: true });
    expect((await get(d.id)).tags).toEqual([]);
  });

  it('answers 404 for an unknown deal or tag, 403 without pipeline.deals.edit', async () => {
    const d = await newDeal();
    const t = await makeTag(api, org, 'frio');
    const nope = '00000000-0000-4000-8000-000000000000';
    expect((await api.rest('POST', `/backend/pipeline/deals/${nope}/tags/${t.id}`, { key: org.key })).status).toBe(404);
    const r = await api.rest('POST', `/backend/pipeline/deals/${d.id}/tags/${nope}`, { key: org.key });
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('ERR_NOT_FOUND');
    const viewer = await api.keyFor(org, 'admin', ['pipeline.view']);
    expect((await api.rest('POST', `/backend/pipeline/deals/${d.id}/tags/${t.id}`, { key: viewer })).status).toBe(403);
  });
});

describe('delete deal', () => {
  it('removes lines, tags, activities and history, keeps the lead; 404 afterwards', async () => {
    const t = await makeTag(api, org, 'del');
    const d = await newDeal({ tag_ids: [t.id], products: [{ name: 'L', price: 1 }] });
    await api.rest('POST', `/backend/pipeline/deals/${d.id}/activities`, { key: org.key, body: { title: 'Ligar' } });
    const r = await api.rest('DELETE', `/backend/pipeline/deals/${d.id}`, { key: org.key });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true });
    expect((await api.rest('GET', `/backend/pipeline/deals/${d.id}`, { key: org.key })).status).toBe(404);
    const db = api.db.prisma;
    expect(await db.dealProduct.count({ where: { deal_id: d.id } })).toBe(0);
    expect(await db.dealTag.count({ where: { deal_id: d.id } })).toBe(0);
    expect(await db.activity.count({ where: { deal_id: d.id } })).toBe(0);
    expect(await db.dealEvent.count({ where: { deal_id: d.id } })).toBe(0);
    expect((await api.rest('GET', `/backend/leads/${lead.id}`, { key: org.key })).status).toBe(200);
    const again = await api.rest('DELETE', `/backend/pipeline/deals/${d.id}`, { key: org.key });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('ERR_NOT_FOUND');
  });

  it('needs pipeline.deals.delete: operators get 403 and the deal stays', async () => {
    const d = await newDeal();
    const operator = await api.keyFor(org, 'operator');
    const r = await api.rest('DELETE', `/backend/pipeline/deals/${d.id}`, { key: operator });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('ERR_FORBIDDEN');
    expect((await api.rest('GET', `/backend/pipeline/deals/${d.id}`, { key: operator })).status).toBe(200);
  });
});
