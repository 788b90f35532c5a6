// The kanban a front end writes (every stage, each stage's first 50 deals with their lead, owner, tags
// and lines, the stage counts and totals) is served on realistic data: a query that does not fit with
// capped lists at their caps is priced again with the longest list of each kind the organisation holds
// (list_sizes, kept by the database on every write). The estimate still bounds the answer, grows as soon as a longer list is written, and is the
// organisation's own: another organisation's long lists do not change it. The query is the docs' own.
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp, type Org } from '../helpers/app.js';
import { allDocs } from '../helpers/docs.js';
import { makeDeal, makeLead, makePipeline, makeTag, type PipelineFixture } from '../helpers/factories.js';

const api = useTestApp();

/** The docs' kanban query (docs/frontend.md), as they print it: up to its closing brace. */
const KANBAN = /```graphql\n(query Kanban\b[\s\S]*?\n\})\n/.exec(allDocs())![1];

async function kanban(org: Org, pipelineId: string, query = KANBAN) {
  const r = await api.raw('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
    body: JSON.stringify({ query, variables: { id: pipelineId } }),
  });
  return { status: r.status, cost: Number(r.headers.get('x-graphql-cost')), ...((await r.json()) as { data?: any; errors?: any[] }) };
}

/** Objects in an answer: every JSON object below `data`. */
function objects(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + objects(v), 0);
  if (value && typeof value === 'object') return 1 + Object.values(value).reduce((n: number, v) => n + objects(v), 0);
  return 0;
}

let org: Org;
let p: PipelineFixture;

beforeAll(async () => {
  org = await api.newOrg();
  p = await makePipeline(api, org);
  const tags = [await makeTag(api, org, 'quente'), await makeTag(api, org, 'vip'), await makeTag(api, org, 'indicação')];
  const lead = await makeLead(api, org, { name: 'Ana' });
  // 50 deals × 5 lines × 3 tags in each of the pipeline's 4 stages.
  for (const stage of p.stages) {
    for (let i = 0; i < 50; i++) {
      await makeDeal(api, org, {
        pipeline_id: p.id,
        stage_id: stage.id,
        lead_id: lead.id,
        owner_id: org.userId,
        ...(stage.id === p.perdido ? { loss_reason: 'Preço' } : {}),
        tag_ids: tags.map((t) => t.id),
        products: Array.from({ length: 5 }, (_, k) => ({ name: `Item ${k}`, price: 10 + k, qty: 1 + (i % 3) })),
      });
    }
  }
}, 120_000);

describe('the kanban query', () => {
  it('answers on realistic data, within the limit, its objects within the estimate', async () => {
    const r = await kanban(org, p.id);
    expect(r.errors).toBeUndefined();
    expect(r.status).toBe(200);
    expect(r.data.pipelineBoard.total_deals).toBe(200);
    const columns = r.data.pipelineBoard.stages;
    expect(columns).toHaveLength(4);
    for (const column of columns) {
      expect(column.deal_count).toBe(50);
      expect(column.stage.deals.nodes).toHaveLength(50);
      expect(column.stage.deals.nodes[0].products).toHaveLength(5);
      expect(column.stage.deals.nodes[0].tags).toHaveLength(3);
      expect(column.stage.deals.nodes[0].owner.id).toBe(org.userId);
    }
    expect(objects(r.data)).toBeLessThanOrEqual(r.cost);
    expect(r.cost).toBeLessThanOrEqual(50_000);
  });

  it('is priced by this organisation’s lists only', async () => {
    const before = await kanban(org, p.id);
    const other = await api.newOrg();
    const q = await makePipeline(api, other);
    const lead = await makeLead(api, other, { name: 'Bia' });
    const products = Array.from({ length: 200 }, (_, i) => ({ name: `L${i}`, price: 1, qty: 1 }));
    await makeDeal(api, other, { pipeline_id: q.id, stage_id: q.entrada, lead_id: lead.id, products });
    const after = await kanban(org, p.id);
    expect(after.errors).toBeUndefined();
    expect(after.cost).toBe(before.cost);
    // The other organisation's own kanban is priced at its 200 lines.
    expect((await kanban(other, q.id)).cost).toBeGreaterThan(before.cost);
  });

  it('is priced higher as soon as a longer list is written; a refusal says what to page', async () => {
    const before = await kanban(org, p.id);
    // One more deal, with 200 lines and 100 tags.
    const products = Array.from({ length: 200 }, (_, i) => ({ name: `L${i}`, price: 1, qty: 1 }));
    await api.db.prisma.tag.createMany({
      data: Array.from({ length: 97 }, (_, i) => ({ tenant_id: org.tenantId, name: `t${i}`, color: '#22c55e' })),
    });
    const tag_ids = (await api.db.prisma.tag.findMany({ where: { tenant_id: org.tenantId }, select: { id: true } })).map((t) => t.id);
    const lead = await makeLead(api, org, { name: 'Caio' });
    await makeDeal(api, org, { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id, products, tag_ids });

    // 200 deals × (200 lines + 100 tags) could now be answered: refused before anything runs.
    const refused = await kanban(org, p.id);
    expect(refused.status).toBe(400);
    expect(refused.data).toBeUndefined();
    expect(refused.cost).toBeGreaterThan(50_000);
    expect(refused.errors![0]).toMatchObject({
      message: expect.stringContaining('first'),
      extensions: { code: 'INVALID_INPUT', status: 400, cost: refused.cost, max_cost: 50_000 },
    });

    // Asking for each deal's first 5 lines and 3 tags: served again.
    const paged = await kanban(org, p.id, KANBAN.replace('products {', 'products(first: 5) {').replace('tags {', 'tags(first: 3) {'));
    expect(paged.errors).toBeUndefined();
    expect(paged.cost).toBeLessThanOrEqual(50_000);
    expect(paged.cost).toBeGreaterThanOrEqual(before.cost);
    expect(objects(paged.data)).toBeLessThanOrEqual(paged.cost);
  });
});
