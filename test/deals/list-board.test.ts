// GET /backend/pipelines/{id}/deals and /board: each filter, sort and pagination edge, board totals,
// permissions, and the SQL statement count of a page (constant whatever its size).
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp, type Org } from '../helpers/app.js';
import { createDeal, makeLead, makePipeline, makeTag, type PipelineFixture } from '../helpers/factories.js';

const api = useTestApp();

let org: Org;
let p: PipelineFixture;
const deals: Record<string, any> = {};
const DAY = 86_400_000;

const list = (query = '', key = org.key, pipelineId = p.id) => api.rest('GET', `/backend/pipelines/${pipelineId}/deals${query}`, { key });
const board = (query = '', key = org.key, pipelineId = p.id) => api.rest('GET', `/backend/pipelines/${pipelineId}/board${query}`, { key });
const numbers = (body: any) => body.data.map((d: any) => d.number);

beforeAll(async () => {
  org = await api.newOrg();
  p = await makePipeline(api, org);
  const specs = [
    { key: 'mariana', lead: { name: 'Mariana Souza', company: 'Alfa Ltda' }, stage: p.entrada, value: 100, createdDaysAgo: 2 },
    {
      key: 'joao',
      lead: { name: 'João', company: 'Beta_Corp' },
      stage: p.andamento,
      products: [{ name: 'Svc', price: 150, qty: 2 }],
      createdDaysAgo: 20,
    },
    { key: 'pedro', lead: { name: 'Pedro', company: 'Gama' }, stage: p.ganho, value: 1000, createdDaysAgo: 200, wonDaysAgo: 3 },
    {
      key: 'lucia',
      lead: { name: 'Lúcia', company: '100% Delta' },
      stage: p.perdido,
      loss_reason: 'Preço',
      value: 50,
      createdDaysAgo: 400,
      lostDaysAgo: 40,
    },
    { key: 'marcos', lead: { name: 'Marcos', company: 'ALFA Sul' }, stage: p.entrada, value: 0.5, createdDaysAgo: 10 },
  ];
  const now = Date.now();
  for (const s of specs) {
    const lead = await makeLead(api, org, s.lead);
    const r = await createDeal(api, org, {
      pipeline_id: p.id,
      stage_id: s.stage,
      lead_id: lead.id,
      value: s.value,
      products: s.products,
      loss_reason: s.loss_reason,
    });
    expect(r.status).toBe(201);
    await api.db.prisma.deal.update({
      where: { tenant_id_id: { tenant_id: org.tenantId, id: r.body.id } },
      data: {
        created_at: new Date(now - s.createdDaysAgo * DAY),
        won_at: s.wonDaysAgo ? new Date(now - s.wonDaysAgo * DAY) : undefined,
        lost_at: s.lostDaysAgo ? new Date(now - s.lostDaysAgo * DAY) : undefined,
      },
    });
    deals[s.key] = { ...r.body, created_at: new Date(now - s.createdDaysAgo * DAY).toISOString() };
  }
});

describe('deals list', () => {
  it('lists newest first with the pagination object', async () => {
    const r = await list();
    expect(r.status).toBe(200);
    expect(numbers(r.body)).toEqual([deals.mariana, deals.marcos, deals.joao, deals.pedro, deals.lucia].map((d) => d.number));
    expect(r.body.pagination).toEqual({
      current_page: 1,
      total_pages: 1,
      total_count: 5,
      has_next: false,
      has_prev: false,
      next_cursor: null,
    });
    expect(r.body.data[0]).toMatchObject({ lead_name: 'Mariana Souza', lead_company: 'Alfa Ltda', total: 100, products: [], tags: [] });
  });

  it('sort=oldest reverses; an unknown sort is 400', async () => {
    const r = await list('?sort=oldest');
    expect(numbers(r.body)).toEqual([deals.lucia, deals.pedro, deals.joao, deals.marcos, deals.mariana].map((d) => d.number));
    const bad = await list('?sort=sideways');
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('ERR_INVALID_INPUT');
  });

  it('paginates: page, limit, has_next/has_prev, page past the end', async () => {
    const p1 = await list('?limit=2');
    expect(numbers(p1.body)).toEqual([deals.mariana.number, deals.marcos.number]);
    expect(p1.body.pagination).toEqual({
      current_page: 1,
      total_pages: 3,
      total_count: 5,
      has_next: true,
      has_prev: false,
      next_cursor: null,
    });
    const p3 = await list('?limit=2&page=3');
    expect(numbers(p3.body)).toEqual([deals.lucia.number]);
    expect(p3.body.pagination).toEqual({
      current_page: 3,
      total_pages: 3,
      total_count: 5,
      has_next: false,
      has_prev: true,
      next_cursor: null,
    });
    const past = await list('?limit=2&page=9');
    expect(past.status).toBe(200);
    expect(past.body.data).toEqual([]);
    expect(past.body.pagination).toEqual({
      current_page: 9,
      total_pages: 3,
      total_count: 5,
      has_next: false,
      has_prev: true,
      next_cursor: null,
    });
  });

  it('limit outside 1..100 falls back to 20; page below 1 is 1; non-numbers are 400', async () => {
    for (const q of ['?limit=0', '?limit=101', '?limit=-3']) {
      const r = await list(q + '&page=0');
      expect(r.status, q).toBe(200);
      expect(r.body.data).toHaveLength(5);
      expect(r.body.pagination).toMatchObject({ current_page: 1, total_pages: 1 });
    }
    const hundred = await list('?limit=100');
    expect(hundred.body.data).toHaveLength(5);
    expect((await list('?limit=abc')).status).toBe(400);
  });

  it('filters by stage_id; a stage of another pipeline is 400', async () => {
    const r = await list(`?stage_id=${p.entrada}`);
    expect(numbers(r.body)).toEqual([deals.mariana.number, deals.marcos.number]);
    const other = await makePipeline(api, org, 'Outro');
    const bad = await list(`?stage_id=${other.entrada}`);
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('ERR_INVALID_INPUT');
    expect((await list('?stage_id=nope')).status).toBe(400);
  });

  it('search: a number matches the deal number exactly; text matches lead name or company, case-insensitive', async () => {
    expect(numbers((await list(`?search=${deals.joao.number}`)).body)).toEqual([deals.joao.number]);
    expect(numbers((await list(`?search=%23${deals.joao.number}`)).body)).toEqual([deals.joao.number]);
    expect((await list('?search=99999')).body.data).toEqual([]);
    expect(numbers((await list('?search=alfa')).body)).toEqual([deals.mariana.number, deals.marcos.number]);
    expect(numbers((await list('?search=SOUZA')).body)).toEqual([deals.mariana.number]);
    expect(numbers((await list('?search=l%C3%BAcia')).body)).toEqual([deals.lucia.number]);
    // LIKE wildcards are literal
    expect(numbers((await list('?search=100%25')).body)).toEqual([deals.lucia.number]);
    expect(numbers((await list('?search=a_c')).body)).toEqual([deals.joao.number]);
    expect((await list('?search=%25%25%25')).body.data).toEqual([]);
  });

  it('period 7d / 30d / 1y over created_at (default mode)', async () => {
    expect(numbers((await list('?period=7d')).body)).toEqual([deals.mariana.number]);
    expect(numbers((await list('?period=30d')).body)).toEqual([deals.mariana, deals.marcos, deals.joao].map((d) => d.number));
    expect(numbers((await list('?period=1y')).body)).toEqual([deals.mariana, deals.marcos, deals.joao, deals.pedro].map((d) => d.number));
    expect(numbers((await list('?mode=created&period=7d')).body)).toEqual([deals.mariana.number]);
  });

  it('mode won / lost use won_at / lost_at', async () => {
    expect(numbers((await list('?mode=won&period=7d')).body)).toEqual([deals.pedro.number]);
    expect((await list('?mode=lost&period=30d')).body.data).toEqual([]);
    expect(numbers((await list('?mode=lost&period=1y')).body)).toEqual([deals.lucia.number]);
    // mode alone, without a period, does not filter
    expect((await list('?mode=won')).body.data).toHaveLength(5);
    expect((await list('?mode=sideways')).status).toBe(400);
  });

  it('period=custom uses from/to inclusively; from/to without custom are ignored', async () => {
    const from = deals.joao.created_at;
    const to = deals.marcos.created_at;
    expect(numbers((await list(`?period=custom&from=${from}&to=${to}`)).body)).toEqual([deals.marcos.number, deals.joao.number]);
    expect(numbers((await list(`?period=custom&from=${deals.marcos.created_at}`)).body)).toEqual([
      deals.mariana.number,
      deals.marcos.number,
    ]);
    const day = new Date(Date.now() - 2 * DAY).toISOString().slice(0, 10);
    expect(numbers((await list(`?period=custom&from=${day}&to=${day}`)).body)).toEqual([deals.mariana.number]);
    expect((await list(`?from=${from}&to=${to}`)).body.data).toHaveLength(5);
  });

  it('bad period values are 400', async () => {
    for (const q of [
      '?period=2w',
      '?period=custom',
      '?period=custom&from=yesterday',
      `?period=custom&from=${deals.mariana.created_at}&to=${deals.joao.created_at}`,
    ]) {
      const r = await list(q);
      expect(r.status, q).toBe(400);
      expect(r.body.code).toBe('ERR_INVALID_INPUT');
    }
  });

  it('dates outside the years 1970–9999 are 400 on the list and the board', async () => {
    const bad = [
      'from=0000-01-01',
      'from=1969-12-31',
      'to=0000-01-01',
      'from=-010000-01-01',
      'to=+010000-01-01T00:00:00Z',
      'from=1969-12-31T23:59:59Z',
    ];
    for (const q of bad) {
      for (const read of [list, board]) {
        const r = await read(`?period=custom&${q}`);
        expect(r.status, `${read === list ? 'list' : 'board'} ${q}`).toBe(400);
        expect(r.body.code).toBe('ERR_INVALID_INPUT');
      }
    }
    expect((await list('?period=custom&from=1970-01-01&to=9999-12-31')).body.data).toHaveLength(5);
    expect((await board('?period=custom&from=1970-01-01&to=9999-12-31')).body.total_deals).toBe(5);
  });

  it('combines filters', async () => {
    expect(numbers((await list(`?search=alfa&period=7d&stage_id=${p.entrada}`)).body)).toEqual([deals.mariana.number]);
  });

  it('unknown pipeline or one of another organisation: 404', async () => {
    const other = await api.newOrg('Other');
    const r = await list('', other.key);
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('ERR_NOT_FOUND');
    expect((await list('', org.key, '00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await board('', other.key)).status).toBe(404);
  });

  it('needs pipeline.view', async () => {
    const viewer = await api.keyFor(org, 'admin', ['pipeline.view']);
    expect((await list('', viewer)).status).toBe(200);
    expect((await board('', viewer)).status).toBe(200);
    expect((await api.rest('GET', `/backend/pipeline/deals/${deals.joao.id}`, { key: viewer })).status).toBe(200);
    const noView = await api.keyFor(org, 'admin', ['pipeline.manage']);
    const r = await list('', noView);
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('ERR_FORBIDDEN');
    expect((await board('', noView)).status).toBe(403);
    expect((await api.rest('GET', `/backend/pipeline/deals/${deals.joao.id}`, { key: noView })).status).toBe(403);
  });
});

describe('board', () => {
  it('gives every stage in order with deal_count and total (lines or value), and the totals', async () => {
    const r = await board();
    expect(r.status).toBe(200);
    expect(r.body.pipeline).toMatchObject({ id: p.id, name: 'Vendas', loss_reasons: expect.any(Array) });
    expect(r.body.pipeline.stages.map((s: any) => s.id)).toEqual(p.stages.map((s) => s.id));
    expect(r.body.stages.map((s: any) => [s.stage.id, s.deal_count, s.total])).toEqual([
      [p.entrada, 2, 100.5],
      [p.andamento, 1, 300],
      [p.ganho, 1, 1000],
      [p.perdido, 1, 50],
    ]);
    expect(r.body.stages[0].stage).toMatchObject({ name: 'Entrada', position: 0 });
    expect(r.body.total_deals).toBe(5);
    expect(r.body.total_amount).toBe(1450.5);
    expect(r.body).not.toHaveProperty('data');
  });

  it('applies every filter, keeping empty columns', async () => {
    const r = await board('?search=alfa');
    expect(r.body.stages.map((s: any) => s.deal_count)).toEqual([2, 0, 0, 0]);
    expect(r.body.total_amount).toBe(100.5);
    const won = await board('?mode=won&period=30d');
    expect(won.body.stages.map((s: any) => s.deal_count)).toEqual([0, 0, 1, 0]);
    expect(won.body).toMatchObject({ total_deals: 1, total_amount: 1000 });
    const custom = await board(`?period=custom&from=${deals.joao.created_at}&to=${deals.marcos.created_at}`);
    expect(custom.body.total_deals).toBe(2);
    expect((await board(`?search=${deals.pedro.number}`)).body.total_amount).toBe(1000);
    expect((await board('?period=30d&sort=oldest')).body.total_deals).toBe(3);
  });

  it('stage_id restricts the board to that column; another pipeline’s stage is 400', async () => {
    const r = await board(`?stage_id=${p.andamento}`);
    expect(r.body.stages.map((s: any) => [s.stage.id, s.deal_count, s.total])).toEqual([[p.andamento, 1, 300]]);
    expect(r.body).toMatchObject({ total_deals: 1, total_amount: 300 });
    const other = await makePipeline(api, org, 'Outro 2');
    expect((await board(`?stage_id=${other.ganho}`)).status).toBe(400);
    expect((await board('?period=3d')).status).toBe(400);
  });

  it('follows edits, moves and deletes', async () => {
    const fresh = await makePipeline(api, org, 'Fresh');
    const lead = await makeLead(api, org, { name: 'Fresh' });
    const d = (await createDeal(api, org, { pipeline_id: fresh.id, stage_id: fresh.entrada, lead_id: lead.id, value: 10 })).body;
    await api.rest('PUT', `/backend/pipeline/deals/${d.id}`, { key: org.key, body: { products: [{ name: 'A', price: 2.5, qty: 4 }] } });
    await api.rest('PUT', `/backend/pipeline/deals/${d.id}/stage`, { key: org.key, body: { stage_id: fresh.ganho } });
    let r = await board('', org.key, fresh.id);
    expect(r.body.stages.map((s: any) => [s.deal_count, s.total])).toEqual([
      [0, 0],
      [0, 0],
      [1, 10],
      [0, 0],
    ]);
    await api.rest('DELETE', `/backend/pipeline/deals/${d.id}`, { key: org.key });
    r = await board('', org.key, fresh.id);
    expect(r.body).toMatchObject({ total_deals: 0, total_amount: 0 });
  });
});

describe('statement counts', () => {
  it('a page of 20 and a page of 100 cost the same number of statements (≤ 6)', async () => {
    const big = await makePipeline(api, org, 'Big');
    const db = api.db.prisma;
    const leads: { id: string }[] = [];
    for (let i = 0; i < 10; i++) leads.push(await makeLead(api, org, { name: `Big ${i}` }));
    const tag = await makeTag(api, org, 'big', '#000000');
    const start = 100_000;
    await db.deal.createMany({
      data: Array.from({ length: 120 }, (_, i) => ({
        tenant_id: org.tenantId,
        pipeline_id: big.id,
        stage_id: big.stages[i % 4].id,
        lead_id: leads[i % 10].id,
        number: start + i,
        value: i,
        total: i,
        created_at: new Date(Date.now() - i * 1000),
      })),
    });
    const rows = await db.deal.findMany({ where: { pipeline_id: big.id }, select: { id: true } });
    await db.dealProduct.createMany({ data: rows.map((d) => ({ tenant_id: org.tenantId, deal_id: d.id, name: 'L', price: 1, qty: 1 })) });
    await db.dealTag.createMany({ data: rows.map((d) => ({ tenant_id: org.tenantId, deal_id: d.id, tag_id: tag.id })) });
    await db.activity.createMany({
      data: rows.map((d) => ({ tenant_id: org.tenantId, deal_id: d.id, title: 'T', due_at: new Date(Date.now() - DAY) })),
    });

    await list('?limit=1', org.key, big.id); // warm-up: the key's last_used_at write happens once
    let page20: any;
    let page100: any;
    const n20 = await api.countStatements(async () => (page20 = await list('?limit=20', org.key, big.id)));
    const n100 = await api.countStatements(async () => (page100 = await list('?limit=100', org.key, big.id)));
    expect(page20.body.data).toHaveLength(20);
    expect(page100.body.data).toHaveLength(100);
    expect(
      page100.body.data.every((d: any) => d.products.length === 1 && d.tags.length === 1 && d.pending_todos === 1 && d.overdue_todos === 1),
    ).toBe(true);
    expect(page100.body.data.every((d: any) => d.lead_name?.startsWith('Big'))).toBe(true);
    expect(n20).toBe(n100);
    expect(n100).toBeLessThanOrEqual(6);

    const nBoard = await api.countStatements(() => board('', org.key, big.id));
    expect(nBoard).toBeLessThanOrEqual(6);
    const nOne = await api.countStatements(() => api.rest('GET', `/backend/pipeline/deals/${rows[0].id}`, { key: org.key }));
    expect(nOne).toBeLessThanOrEqual(6);
  });
});
