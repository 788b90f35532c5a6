// The kanban built as JSON by PostgreSQL (domains/deals/board-json.ts): the README's board query (every
// stage with its count and total and deals(first: 20) with each deal's lead) answers byte for byte what
// the resolvers write, in a number of statements that does not grow with the stages or the deals;
// selections it does not serve fall back to the resolvers with the same answers; errors are theirs;
// another organisation reads nothing.
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp, type Org } from '../helpers/app.js';
import { jsonPath } from '../helpers/json-path.js';
import { createDeal, makeLead, makePipeline, makeProduct, type PipelineFixture } from '../helpers/factories.js';

const api = useTestApp();
const { graphqlText, resolverText } = jsonPath(api, () => org.key);

let org: Org;
let p: PipelineFixture;

/** README.md, "Quickstart": the board as one GraphQL query (period as a variable). */
const README_BOARD = `query ($id: UUID!, $period: String) { pipelineBoard(id: $id, period: $period) { total_deals total_amount stages { deal_count total stage { name
  deals(first: 20) { totalCount nodes { number total lead { name company } } pageInfo { endCursor hasNextPage } } } } } }`;

/** `count` deals in each of `stages`, newest first by a second, over a few leads (raw inserts: the statement test needs many). */
async function seedDeals(pipeline: PipelineFixture, stages: string[], count: number, firstNumber: number) {
  const leads = [await makeLead(api, org, { name: 'Ana "A" \\ Ñ', company: 'Alfa Ltda' }), await makeLead(api, org, { name: 'Bruno' })];
  await api.db.prisma.deal.createMany({
    data: stages.flatMap((stage, s) =>
      Array.from({ length: count }, (_, i) => ({
        tenant_id: org.tenantId,
        pipeline_id: pipeline.id,
        stage_id: stage,
        lead_id: leads[i % 2].id,
        number: firstNumber + s * count + i,
        value: i + 0.1,
        total: i + 0.1,
        created_at: new Date(Date.now() - (s * count + i) * 1000 - 123),
      })),
    ),
  });
}

beforeAll(async () => {
  org = await api.newOrg();
  p = await makePipeline(api, org);
  const product = await makeProduct(api, org, 'Consultoria', 19.9);
  const lead = await makeLead(api, org, { name: 'Mariana', company: 'Alfa' });
  // Deals through the API (lines, a won one), and 25 more in one column: a second page exists there.
  for (const body of [
    { lead_id: lead.id, products: [{ product_id: product.id, qty: 3 }] },
    { lead_id: lead.id, value: 10.5 },
  ]) {
    expect((await createDeal(api, org, { pipeline_id: p.id, stage_id: p.entrada, ...body })).status).toBe(201);
  }
  expect((await createDeal(api, org, { pipeline_id: p.id, stage_id: p.ganho, lead_id: lead.id, value: 1234567.89 })).status).toBe(201);
  await seedDeals(p, [p.andamento], 25, 1000);
  // An old deal: outside period 30d, so the board's counts and the columns' differ.
  await api.db.prisma.deal.updateMany({
    where: { tenant_id: org.tenantId, number: 1000 + 24 },
    data: { created_at: new Date(Date.now() - 90 * 86_400_000) },
  });
});

describe('the kanban as JSON from PostgreSQL', () => {
  it('answers the README query byte for byte as the resolvers do, with and without a period', async () => {
    for (const variables of [{ id: p.id }, { id: p.id, period: '30d' }]) {
      const served = await graphqlText(README_BOARD, variables);
      expect(served.status).toBe(200);
      expect(served.text).toBe(await resolverText(README_BOARD, { ...variables }));
    }
    const board = JSON.parse((await graphqlText(README_BOARD, { id: p.id, period: '30d' })).text).data.pipelineBoard;
    const column = board.stages[1];
    // The board counts under its period; the column's deals have no filter of their own.
    expect([
      column.deal_count,
      column.stage.deals.totalCount,
      column.stage.deals.nodes.length,
      column.stage.deals.pageInfo.hasNextPage,
    ]).toEqual([24, 25, 20, true]);
    expect(board.stages[0].stage.deals.nodes.map((d: any) => d.total)).toEqual([10.5, 59.7]);
    expect(board.stages[3].stage.deals).toEqual({ totalCount: 0, nodes: [], pageInfo: { endCursor: null, hasNextPage: false } });
  });

  it('serves other selections of the kanban alike: aliases, fragments, __typename, cursors, first', async () => {
    const queries: [string, Record<string, unknown>][] = [
      [
        `query ($id: UUID!) { b: pipelineBoard(id: $id, search: "mariana") { __typename stages { __typename avg_days_in_stage c: deal_count stage { __typename id pipeline_id kind position color
         deals(first: 2) { nodes { ...Card } pageInfo { startCursor endCursor hasPreviousPage hasNextPage } n: totalCount } } } amount: total_amount } }
         fragment Card on Deal { __typename id value created_at lead_name products { name total } lead { __typename id surname email phone avatar_url created_at } }`,
        {},
      ],
      [`query ($id: UUID!) { pipelineBoard(id: $id) { stages { stage { deals(first: 100) { totalCount } } } } }`, {}],
      [`query ($id: UUID!) { pipelineBoard(id: $id) { stages { stage { name } total } } }`, {}],
    ];
    for (const [query, extra] of queries) {
      const variables = { id: p.id, ...extra };
      let served!: { status: number; text: string };
      const statements = await api.countStatements(async () => (served = await graphqlText(query, variables)));
      expect(served.status).toBe(200);
      expect(served.text, query).toBe(await resolverText(query, variables));
      expect(statements, query).toBeLessThanOrEqual(2);
    }
  });

  it('falls back to the resolvers for what it does not serve, with their answers', async () => {
    const queries: [string, Record<string, unknown>][] = [
      [`query ($id: UUID!) { pipelineBoard(id: $id) { pipeline { id } stages { stage { name } } } }`, {}],
      [`query ($id: UUID!) { pipelineBoard(id: $id) { stages { stage { deals(first: 2, sort: oldest) { nodes { number } } } } } }`, {}],
      [`query ($id: UUID!, $n: Int) { pipelineBoard(id: $id) { stages { stage { deals(first: $n) { nodes { number } } } } } }`, { n: 3 }],
      [`query ($id: UUID!) { pipelineBoard(id: $id) { stages { stage { deals { edges { cursor node { number } } } } } } }`, {}],
      [`query ($id: UUID!) { pipelineBoard(id: $id) { stages { stage { deals { nodes { number stage { name } owner { id } } } } } } }`, {}],
      [
        `query ($id: UUID!, $stage: UUID) { pipelineBoard(id: $id, stage_id: $stage) { total_deals stages { stage { name deals { totalCount } } } } }`,
        { stage: p.andamento },
      ],
    ];
    for (const [query, extra] of queries) {
      const variables = { id: p.id, ...extra };
      let served!: { status: number; text: string };
      const statements = await api.countStatements(async () => (served = await graphqlText(query, variables)));
      expect(served.status, `${query} ${served.text}`).toBe(200);
      expect(served.text, query).toBe(await resolverText(query, variables));
      // The resolvers' path: the board, then its loaders (the JSON path is one statement and the key).
      expect(statements, query).toBeGreaterThan(2);
    }
  });

  it('errors as the resolvers do: unknown pipeline, a stage of another pipeline, a bad period', async () => {
    const other = await makePipeline(api, org, 'Outro');
    const query = `query ($id: UUID!, $stage: UUID, $period: String) { pipelineBoard(id: $id, stage_id: $stage, period: $period) { total_deals stages { stage { deals(first: 1) { totalCount } } } } }`;
    for (const variables of [
      { id: '00000000-0000-4000-8000-000000000000' },
      { id: p.id, stage: other.entrada },
      { id: p.id, period: '2d' },
    ]) {
      const answer = JSON.parse((await graphqlText(query, variables)).text);
      const resolved = JSON.parse(await resolverText(query, variables));
      expect(answer.data).toBeNull();
      expect(answer.errors.map((e: any) => [e.message, e.path])).toEqual(resolved.errors.map((e: any) => [e.message, e.path]));
    }
  });
});

describe('statements', () => {
  it('the README query costs the same statements for 4 stages of a few deals and 8 stages of 30 (≤ 2 with the key lookup)', async () => {
    const small = await makePipeline(api, org, 'Pequeno');
    await seedDeals(small, [small.entrada], 2, 20_000);
    const big = await makePipeline(api, org, 'Grande');
    const stages = [...big.stages.map((s) => s.id)];
    for (const name of ['E', 'F', 'G', 'H']) {
      const r = await api.rest('POST', `/backend/pipelines/${big.id}/stages`, { key: org.key, body: { name } });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      stages.push(r.body.id);
    }
    await seedDeals(big, stages, 30, 30_000);
    await graphqlText(README_BOARD, { id: small.id }); // the key's last_used_at write, once
    const counts: number[] = [];
    for (const pipeline of [small, big]) {
      let served!: { status: number; text: string };
      counts.push(await api.countStatements(async () => (served = await graphqlText(README_BOARD, { id: pipeline.id }))));
      expect(served.status).toBe(200);
      expect(served.text).toBe(await resolverText(README_BOARD, { id: pipeline.id }));
    }
    const board = JSON.parse((await graphqlText(README_BOARD, { id: big.id })).text).data.pipelineBoard;
    expect(board.stages).toHaveLength(8);
    expect(board.stages.every((s: any) => s.stage.deals.nodes.length === 20 && s.stage.deals.totalCount === 30)).toBe(true);
    expect(counts[0]).toBe(counts[1]);
    expect(counts[1]).toBeLessThanOrEqual(2);
  });
});

describe('tenant isolation', () => {
  it('another organisation gets NOT_FOUND for this pipeline, and its own board holds only its own deals', async () => {
    const other = await api.newOrg('Outra');
    const theirs = await makePipeline(api, other);
    const lead = await makeLead(api, other, { name: 'Deles' });
    expect((await createDeal(api, other, { pipeline_id: theirs.id, stage_id: theirs.entrada, lead_id: lead.id, value: 1 })).status).toBe(
      201,
    );
    const foreign = JSON.parse((await graphqlText(README_BOARD, { id: p.id }, other.key)).text);
    expect(foreign.data).toBeNull();
    expect(foreign.errors[0].extensions.code).toBe('NOT_FOUND');
    const own = JSON.parse((await graphqlText(README_BOARD, { id: theirs.id }, other.key)).text).data.pipelineBoard;
    expect(own.total_deals).toBe(1);
    expect(own.stages.flatMap((s: any) => s.stage.deals.nodes.map((d: any) => d.lead.name))).toEqual(['Deles']);
  });
});
