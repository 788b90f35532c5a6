// The product catalog: CRUD, permissions, tenant isolation, and what catalog changes do to deal lines.
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { makeDeal, makeLead, makePipeline, makeProduct } from '../helpers/factories.js';
import { graphql } from '../gql/index.js';
import { snapshot } from './helpers.js';

const api = useTestApp();

const ProductsGql = graphql(`
  query ProductsGql {
    products {
      id
      name
      price
    }
  }
`);

describe('product catalog', () => {
  it('creates (price default 0), lists by name, updates and deletes products', async () => {
    const org = await api.newOrg();
    const a = await api.rest('POST', '/backend/pipeline/products', { key: org.key, body: { name: 'Plano Pro', price: 199.9 } });
    expect(a.status).toBe(201);
    expect(a.body).toEqual({ id: expect.any(String), name: 'Plano Pro', price: 199.9, updated_at: expect.any(String) });
    const b = await api.rest('POST', '/backend/pipeline/products', { key: org.key, body: { name: 'Consultoria' } });
    expect(b.body).toEqual({ id: expect.any(String), name: 'Consultoria', price: 0, updated_at: expect.any(String) });

    const list = await api.rest('GET', '/backend/pipeline/products', { key: org.key });
    expect(list.status).toBe(200);
    expect(list.body).toEqual([b.body, a.body]);

    const up = await api.rest('PUT', `/backend/pipeline/products/${a.body.id}`, {
      key: org.key,
      body: { name: 'Plano Pro+', price: 249.5 },
    });
    expect(up.status).toBe(200);
    expect(up.body).toEqual({ id: a.body.id, name: 'Plano Pro+', price: 249.5, updated_at: expect.any(String) });
    // An edit is a change a sync sees.
    expect(Date.parse(up.body.updated_at)).toBeGreaterThan(Date.parse(a.body.updated_at));
    const keepPrice = await api.rest('PUT', `/backend/pipeline/products/${a.body.id}`, { key: org.key, body: { name: 'Plano' } });
    expect(keepPrice.body.price).toBe(249.5);

    const del = await api.rest('DELETE', `/backend/pipeline/products/${b.body.id}`, { key: org.key });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ success: true });
    expect((await api.rest('GET', '/backend/pipeline/products', { key: org.key })).body.map((p: any) => p.id)).toEqual([a.body.id]);
    expect((await api.rest('DELETE', `/backend/pipeline/products/${b.body.id}`, { key: org.key })).status).toBe(404);

    const gql = await api.gql(ProductsGql, {}, org.key);
    expect(gql.data?.products).toEqual([{ id: a.body.id, name: 'Plano', price: 249.5 }]);
  });

  it('refuses negative prices, empty names and unknown ids, changing nothing', async () => {
    const org = await api.newOrg();
    const a = await api.rest('POST', '/backend/pipeline/products', { key: org.key, body: { name: 'A', price: 10 } });
    const before = await snapshot(api, org.tenantId);
    const cases: [string, string, unknown, number][] = [
      ['POST', '/backend/pipeline/products', { name: 'X', price: -1 }, 400],
      ['POST', '/backend/pipeline/products', { name: '  ', price: 1 }, 400],
      ['POST', '/backend/pipeline/products', { price: 1 }, 400],
      ['POST', '/backend/pipeline/products', { name: 'X', price: 'abc' }, 400],
      ['POST', '/backend/pipeline/products', { name: 'X', price: 1e15 }, 400],
      ['PUT', `/backend/pipeline/products/${a.body.id}`, { name: 'X', price: -0.01 }, 400],
      ['PUT', `/backend/pipeline/products/${a.body.id}`, { price: 5 }, 400],
      ['PUT', '/backend/pipeline/products/00000000-0000-4000-8000-000000000000', { name: 'X' }, 404],
      ['PUT', '/backend/pipeline/products/nope', { name: 'X' }, 400],
      ['DELETE', '/backend/pipeline/products/00000000-0000-4000-8000-000000000000', undefined, 404],
    ];
    for (const [method, path, body, status] of cases) {
      const r = await api.rest(method, path, { key: org.key, body });
      expect(r.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(status);
      expect(r.body.code).toBe(status === 404 ? 'ERR_NOT_FOUND' : 'ERR_INVALID_INPUT');
    }
    expect(await snapshot(api, org.tenantId)).toEqual(before);
  });

  it('permissions: pipeline.view to read, pipeline.products.manage to write', async () => {
    const org = await api.newOrg();
    const a = await api.rest('POST', '/backend/pipeline/products', { key: org.key, body: { name: 'A', price: 10 } });
    const operator = await api.keyFor(org, 'operator');
    const manageOnly = await api.keyFor(org, 'admin', ['pipeline.products.manage']);
    const pipelineManager = await api.keyFor(org, 'admin', ['pipeline.view', 'pipeline.manage']);
    const before = await snapshot(api, org.tenantId);

    for (const key of [operator, pipelineManager]) {
      expect((await api.rest('GET', '/backend/pipeline/products', { key })).status).toBe(200);
      for (const r of await Promise.all([
        api.rest('POST', '/backend/pipeline/products', { key, body: { name: 'X' } }),
        api.rest('PUT', `/backend/pipeline/products/${a.body.id}`, { key, body: { name: 'X' } }),
        api.rest('DELETE', `/backend/pipeline/products/${a.body.id}`, { key }),
      ])) {
        expect(r.status).toBe(403);
        expect(r.body).toEqual({ code: 'ERR_FORBIDDEN', message: expect.any(String) });
      }
    }
    const noView = await api.rest('GET', '/backend/pipeline/products', { key: manageOnly });
    expect(noView.status).toBe(403);
    expect(await snapshot(api, org.tenantId)).toEqual(before);

    const created = await api.rest('POST', '/backend/pipeline/products', { key: manageOnly, body: { name: 'Y', price: 1 } });
    expect(created.status).toBe(201);
  });

  it('products of another organisation are 404 and unchanged; catalogs are separate', async () => {
    const a = await api.newOrg('A');
    const b = await api.newOrg('B');
    const pb = await api.rest('POST', '/backend/pipeline/products', { key: b.key, body: { name: 'B', price: 5 } });
    const before = await snapshot(api, b.tenantId);
    expect((await api.rest('PUT', `/backend/pipeline/products/${pb.body.id}`, { key: a.key, body: { name: 'X' } })).status).toBe(404);
    expect((await api.rest('DELETE', `/backend/pipeline/products/${pb.body.id}`, { key: a.key })).status).toBe(404);
    expect((await api.rest('GET', '/backend/pipeline/products', { key: a.key })).body).toEqual([]);
    expect(await snapshot(api, b.tenantId)).toEqual(before);
  });

  it('editing a product leaves existing lines alone; deleting it turns its lines into one-off lines with totals unchanged', async () => {
    const org = await api.newOrg();
    const p = await makePipeline(api, org);
    const lead = await makeLead(api, org);
    const db = api.db.prisma;
    const product = await makeProduct(api, org, 'Licença', 100);
    const other = await makeProduct(api, org, 'Suporte', 30);
    // Lines written by the deals service: name and price copied from the catalog at add time.
    const deal = await makeDeal(api, org, {
      pipeline_id: p.id,
      stage_id: p.entrada,
      lead_id: lead.id,
      products: [{ product_id: product.id, qty: 2 }, { product_id: other.id }],
    });
    const [line, keep] = deal.products;
    expect([line.product_id, line.name, line.price, line.qty, keep.product_id, deal.total]).toEqual([
      product.id,
      'Licença',
      100,
      2,
      other.id,
      230,
    ]);

    await api.rest('PUT', `/backend/pipeline/products/${product.id}`, { key: org.key, body: { name: 'Licença 2027', price: 150 } });
    const afterEdit = await db.dealProduct.findFirstOrThrow({ where: { id: line.id } });
    expect([afterEdit.name, Number(afterEdit.price), afterEdit.qty, afterEdit.product_id, afterEdit.custom]).toEqual([
      'Licença',
      100,
      2,
      product.id,
      false,
    ]);

    const r = await api.rest('DELETE', `/backend/pipeline/products/${product.id}`, { key: org.key });
    expect(r.status).toBe(200);
    const afterDelete = await db.dealProduct.findFirstOrThrow({ where: { id: line.id } });
    expect([afterDelete.name, Number(afterDelete.price), afterDelete.qty, afterDelete.product_id, afterDelete.custom]).toEqual([
      'Licença',
      100,
      2,
      null,
      true,
    ]);
    const untouched = await db.dealProduct.findFirstOrThrow({ where: { id: keep.id } });
    expect([untouched.product_id, untouched.custom]).toEqual([other.id, false]);
    expect(Number((await db.deal.findFirstOrThrow({ where: { id: deal.id } })).total)).toBe(230);
    expect(await db.product.count({ where: { id: product.id } })).toBe(0);
  });
});
