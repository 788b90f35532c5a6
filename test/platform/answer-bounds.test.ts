// Bounded answers (decisions.md "Bounded work"): no GraphQL or REST answer past 10 MB of JSON (400 with
// the limit instead), and `/health` answers within 1 s over a real socket while the most expensive query
// the cost limit allows runs. The event loop's longest block is measured too, which a loaded machine
// does not lengthen the way it lengthens wall-clock time.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { listen } from '../../src/http/server.js';
import { useTestApp } from '../helpers/app.js';
import { makePipeline } from '../helpers/factories.js';

const api = useTestApp({ HOST: '127.0.0.1', PORT: '0' });

async function graphql(base: string, key: string, query: string) {
  const r = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query }),
  });
  return { status: r.status, cost: Number(r.headers.get('x-graphql-cost')), body: (await r.json()) as { data?: any; errors?: any[] } };
}

describe('bounded answers', () => {
  it('refuses an answer over 10 MB of JSON with 400 INVALID_INPUT on GraphQL and REST; a smaller one is served', async () => {
    const org = await api.newOrg();
    const content = 'x'.repeat(1_900_000);
    await api.db.prisma.knowledgeItem.createMany({
      data: Array.from({ length: 6 }, (_, i) => ({ tenant_id: org.tenantId, name: `grande ${i}`, typed_text: content })),
    });
    const post = (query: string) =>
      api.raw('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
        body: JSON.stringify({ query }),
      });
    const big = await post('{ knowledgeItems { id content } }');
    expect(big.status).toBe(400);
    const body = (await big.json()) as { data?: unknown; errors: { extensions: Record<string, unknown> }[] };
    expect(body.data).toBeUndefined();
    expect(body.errors[0].extensions).toMatchObject({ code: 'INVALID_INPUT', max_bytes: 10 * 1024 * 1024 });
    const small = await post('{ knowledgeItems { id name } }');
    expect(small.status).toBe(200);
    // REST: the same bound and the same refusal, in the route's style; one item alone is served.
    const rest = await api.rest('GET', '/backend/knowledge', { key: org.key });
    expect(rest.status).toBe(400);
    expect(rest.body).toMatchObject({ code: 'ERR_INVALID_INPUT', max_bytes: 10 * 1024 * 1024 });
    const [first] = await api.db.prisma.knowledgeItem.findMany({ where: { tenant_id: org.tenantId }, select: { id: true }, take: 1 });
    const one = await api.rest('GET', `/backend/knowledge/${first.id}`, { key: org.key });
    expect(one.status).toBe(200);
    expect(one.body.content).toHaveLength(1_900_000);
  });

  it('/health answers within 1 s while the most expensive allowed query runs', async () => {
    const org = await api.newOrg();
    const running = await listen(api.app as never, api.config);
    try {
      // The costliest shape within the limit (50,000), over data at the caps: 100 deals, each with 200
      // lines and 100 tags, on a lead with 100 tags; the deal's tags asked twice (an alias) to fill the budget.
      const prisma = api.db.prisma;
      const t = org.tenantId;
      const p = await makePipeline(api, org);
      await prisma.tag.createMany({ data: Array.from({ length: 100 }, (_, i) => ({ tenant_id: t, name: `t${i}`, color: '#22c55e' })) });
      const tags = await prisma.tag.findMany({ where: { tenant_id: t }, select: { id: true } });
      const lead = await prisma.lead.create({ data: { tenant_id: t, name: 'Muitos', phone: '+5531900000001' } });
      await prisma.leadTag.createMany({ data: tags.map((tag) => ({ tenant_id: t, lead_id: lead.id, tag_id: tag.id })) });
      await prisma.deal.createMany({
        data: Array.from({ length: 100 }, (_, i) => ({
          tenant_id: t,
          number: i + 1,
          pipeline_id: p.id,
          stage_id: p.entrada,
          lead_id: lead.id,
          total: 200,
        })),
      });
      const deals = await prisma.deal.findMany({ where: { tenant_id: t }, select: { id: true } });
      await prisma.dealProduct.createMany({
        data: deals.flatMap((d) =>
          Array.from({ length: 200 }, (_, j) => ({ tenant_id: t, deal_id: d.id, name: `L${j}`, price: 1, qty: 1, position: j })),
        ),
      });
      await prisma.dealTag.createMany({ data: deals.flatMap((d) => tags.map((tag) => ({ tenant_id: t, deal_id: d.id, tag_id: tag.id }))) });
      const TAG = '{ id name color created_at updated_at }';
      const query = `{ pipelineDeals(id: "${p.id}", limit: 100) { data { id number total products { id name price qty total } tags ${TAG} again: tags(first: 86) ${TAG} lead { id name tags ${TAG} } } } }`;
      const loop = monitorEventLoopDelay({ resolution: 10 });
      loop.enable();
      const expensive = graphql(running.url, org.key, query);
      const health: number[] = [];
      let done = false;
      void expensive.finally(() => (done = true));
      while (!done) {
        const started = performance.now();
        const r = await fetch(`${running.url}/health`);
        expect(r.status).toBe(200);
        health.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      loop.disable();
      const answer = await expensive;
      expect(answer.status).toBe(200);
      expect(answer.cost).toBeLessThanOrEqual(50_000);
      expect(answer.cost).toBeGreaterThan(49_000);
      const page = answer.body.data.pipelineDeals.data;
      expect(page).toHaveLength(100);
      expect(page[99].products).toHaveLength(200);
      expect(page[99].lead.tags).toHaveLength(100);
      expect(health.length).toBeGreaterThan(0);
      expect(loop.max / 1e6, 'longest event-loop block (ms)').toBeLessThan(1000);
      expect(Math.max(...health), '/health latency (ms)').toBeLessThan(1000);
    } finally {
      await running.close();
    }
  }, 60_000);
});
