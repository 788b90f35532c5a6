// GraphQL limits: lists multiply the cost of what is under them, so a fan-out over pipelines × stages ×
// deals, or many board aggregations, is refused before anything runs, while a front end's board passes.
// Every refusal of a request (parse, validation, depth, aliases, cost, variables) has the error shape
// of the rest of the API and HTTP 400; production hides "Did you mean" suggestions, enum values included.
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp, type Org, type TestClient } from '../helpers/app.js';
import { createDeal, makeLead, makePipeline, makeTag, type PipelineFixture } from '../helpers/factories.js';

const api = useTestApp();
const production = useTestApp({ NODE_ENV: 'production' });

async function post(client: TestClient, key: string, query: string, variables?: Record<string, unknown>, accept?: string) {
  const r = await client.raw('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...(accept ? { accept } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  return { status: r.status, ...((await r.json()) as { data?: any; errors?: any[] }) };
}

/**
 * What a front end loads: every column of a board with its first deals, their lead, first lines and
 * first tags. Stages, lines and tags are counted at the organisation's longest such list (here 10
 * stages, 1 line, 100 tags), at most their `first`.
 */
const BOARD = `query Board($id: UUID!, $first: Int) {
  pipelineBoard(id: $id) {
    total_deals
    total_amount
    stages { deal_count total stage { id } }
    pipeline {
      id
      name
      stages(first: 10) {
        id
        name
        color
        deals(first: $first) {
          edges { cursor node { id number total lead_name pending_todos lead { id name } products(first: 5) { name total } tags(first: 5) { name } } }
          pageInfo { hasNextPage endCursor }
        }
      }
    }
  }
}`;

/** Every column's deals with their tags (one deal has 100): 5 a column pass, 100 do not. */
const FAN_OUT = `query FanOut($first: Int) {
  pipelines { pipelines { stages { deals(first: $first) { edges { node { id number lead { name } tags { name } } } } } } }
}`;

let org: Org;
let p: PipelineFixture;

beforeAll(async () => {
  org = await api.newOrg();
  p = await makePipeline(api, org);
  for (let i = 4; i < 10; i++) {
    expect((await api.rest('POST', `/backend/pipelines/${p.id}/stages`, { key: org.key, body: { name: `Etapa ${i}` } })).status).toBe(201);
  }
  const lead = await makeLead(api, org, { name: 'Ana' });
  const tag = await makeTag(api, org, 'vip');
  for (let i = 0; i < 20; i++) {
    const r = await createDeal(api, org, {
      pipeline_id: p.id,
      stage_id: p.entrada,
      lead_id: lead.id,
      tag_ids: [tag.id],
      products: [{ name: `L${i}`, price: 10, qty: 1 }],
    });
    expect(r.status).toBe(201);
  }
  // One deal with 100 tags: every deal's tags are priced at 100 from now on.
  await api.db.prisma.tag.createMany({
    data: Array.from({ length: 99 }, (_, i) => ({ tenant_id: org.tenantId, name: `t${i}`, color: '#22c55e' })),
  });
  const tagIds = (await api.db.prisma.tag.findMany({ where: { tenant_id: org.tenantId }, select: { id: true } })).map((t) => t.id);
  const many = await createDeal(api, org, { pipeline_id: p.id, stage_id: p.ganho, lead_id: lead.id, tag_ids: tagIds });
  expect(many.status).toBe(201);
});

describe('GraphQL cost', () => {
  it('serves a board of 10 columns × 20 deals in one request', async () => {
    const r = await post(api, org.key, BOARD, { id: p.id, first: 20 });
    expect(r.errors).toBeUndefined();
    expect(r.status).toBe(200);
    const columns = r.data.pipelineBoard.pipeline.stages;
    expect(columns).toHaveLength(10);
    expect(columns[0].deals.edges).toHaveLength(20);
    expect(columns[0].deals.edges[0].node.tags).toEqual([{ name: 'vip' }]);
  });

  it('serves a page of 100 whole deal cards with their lead, and the README board, in one request each', async () => {
    const CARD = 'id number total products { id name price qty total } tags { id name color } lead { id name company tags { id name } }';
    const page = await post(
      api,
      org.key,
      `query ($id: UUID!) { pipelineDeals(id: $id, limit: 100) { data { ${CARD} } pagination { total_count } } }`,
      { id: p.id },
    );
    expect(page.errors).toBeUndefined();
    expect(page.data.pipelineDeals.data).toHaveLength(21);
    expect(page.data.pipelineDeals.data[0].lead.name).toBe('Ana');
    const board = await post(
      api,
      org.key,
      `query ($id: UUID!) { pipelineBoard(id: $id, period: "30d") { total_deals total_amount stages { deal_count total stage { name deals(first: 20) { totalCount nodes { number total lead { name company } } pageInfo { endCursor hasNextPage } } } } } }`,
      { id: p.id },
    );
    expect(board.errors).toBeUndefined();
    expect(board.data.pipelineBoard.total_deals).toBe(21);
  });

  it('refuses pipelines × stages × 100 deals before running it, counting variables', async () => {
    const small = await post(api, org.key, FAN_OUT, { first: 5 });
    expect(small.errors).toBeUndefined();
    expect(small.data.pipelines.pipelines[0].stages[0].deals.edges).toHaveLength(5);

    // The same document (validated and cached above) with a larger page: refused.
    const statementsOfARefusal = await api.countStatements(() => post(api, org.key, '{ tags { id }'));
    let big: Awaited<ReturnType<typeof post>> | undefined;
    const statements = await api.countStatements(async () => (big = await post(api, org.key, FAN_OUT, { first: 100 })));
    expect(big!.status).toBe(400);
    expect(big!.data).toBeUndefined();
    expect(big!.errors).toHaveLength(1);
    expect(big!.errors![0]).toMatchObject({
      message: expect.stringMatching(/custo estimado \d+, máximo 50000/),
      extensions: { code: 'INVALID_INPUT', status: 400, cost: expect.any(Number), max_cost: 50000 },
    });
    // Nothing runs but the one statement that counts the organisation's pipelines for the estimate.
    expect(statements).toBe(statementsOfARefusal + 1);

    const byDefault = await post(api, org.key, FAN_OUT.replace('$first: Int', '$first: Int = 100'));
    expect(byDefault.status).toBe(400);

    const literal = await post(
      api,
      org.key,
      '{ pipelineGroups { pipelines(first: 100) { nodes { stages { deals(first: 100) { edges { node { id } } } } } } } }',
    );
    expect(literal.status).toBe(400);
    expect(literal.errors![0].extensions).toMatchObject({ code: 'INVALID_INPUT', status: 400 });
  });

  it('counts a page size above the cap as the cap', async () => {
    // first: 5000 is served as 100, so it costs what first: 100 costs, not more.
    const capped = await post(api, org.key, FAN_OUT, { first: 5000 });
    const hundred = await post(api, org.key, FAN_OUT, { first: 100 });
    expect(capped.errors![0].extensions.cost).toBe(hundred.errors![0].extensions.cost);
  });

  it('refuses 15 board aggregations in one request; one board passes', async () => {
    const boards = Array.from({ length: 15 }, (_, i) => `b${i}: pipelineBoard(id: $id) { total_deals }`).join('\n');
    const many = await post(api, org.key, `query Boards($id: UUID!) { ${boards} }`, { id: p.id });
    expect(many.status).toBe(400);
    expect(many.errors![0].extensions).toMatchObject({ code: 'INVALID_INPUT', status: 400 });
    const one = await post(api, org.key, `query Board($id: UUID!) { pipelineBoard(id: $id) { total_deals } }`, { id: p.id });
    expect(one.errors).toBeUndefined();
    expect(one.data.pipelineBoard.total_deals).toBe(21);
  });

  it('leaves introspection (GraphiQL) alone', async () => {
    const r = await post(
      api,
      org.key,
      '{ __schema { types { name fields { name args { name type { name ofType { name } } } type { name ofType { name ofType { name } } } } } } }',
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.__schema.types.length).toBeGreaterThan(10);
  });
});

describe('GraphQL request errors', () => {
  const deep =
    '{ pipelines { pipelines { group { pipelines { nodes { group { pipelines { nodes { group { pipelines { nodes { id } } } } } } } } } } } }';
  const aliases = `{ ${Array.from({ length: 20 }, (_, i) => `a${i}: tags { id }`).join(' ')} }`;
  const cases: [string, string][] = [
    ['an unknown field', '{ tagz { id } }'],
    ['a query too deep', deep],
    ['too many aliases', aliases],
    ['a syntax error', '{ tags { id }'],
    ['an unknown enum value', `{ pipelineDeals(id: "00000000-0000-4000-8000-000000000000", sort: recnt) { data { id } } }`],
  ];

  for (const [what, query] of cases) {
    it(`answers ${what} with 400 and {code, status}, whatever the Accept header`, async () => {
      for (const accept of [undefined, 'application/json', 'application/graphql-response+json']) {
        const r = await post(api, org.key, query, undefined, accept);
        expect(r.status, `${what}, accept ${accept}`).toBe(400);
        expect(r.data).toBeUndefined();
        // A refused argument literal is named (decisions.md: `extensions.details`).
        const details = what === 'an unknown enum value' ? { details: [{ field: 'sort', message: expect.stringContaining('recnt') }] } : {};
        expect(r.errors![0].extensions).toEqual({ code: 'INVALID_INPUT', status: 400, ...details });
      }
    });
  }

  it('answers a variable of the wrong type with 400 too', async () => {
    const r = await post(
      api,
      org.key,
      'query($s: DealSort) { pipelineDeals(id: "00000000-0000-4000-8000-000000000000", sort: $s) { data { id } } }',
      { s: 'recnt' },
    );
    expect(r.status).toBe(400);
    // The variable that was wrong is named (decisions.md: `extensions.details`).
    expect(r.errors![0].extensions).toEqual({ code: 'INVALID_INPUT', status: 400, details: [{ field: 's', message: expect.any(String) }] });
  });

  it('suggests names outside production', async () => {
    const r = await post(api, org.key, '{ tagz { id } }');
    expect(r.errors![0].message).toMatch(/Did you mean "tags"\?/);
  });

  it('hides field and enum suggestions in production, in documents and in variables', async () => {
    const prodOrg = await production.newOrg();
    const id = '00000000-0000-4000-8000-000000000000';
    const field = await post(production, prodOrg.key, '{ tagz { id } }');
    const literal = await post(production, prodOrg.key, `{ pipelineDeals(id: "${id}", sort: recnt) { data { id } } }`);
    const variable = await post(production, prodOrg.key, `query($s: DealSort) { pipelineDeals(id: "${id}", sort: $s) { data { id } } }`, {
      s: 'recnt',
    });
    for (const r of [field, literal, variable]) {
      expect(r.status).toBe(400);
      const { details, ...extensions } = r.errors![0].extensions;
      expect(extensions).toEqual({ code: 'INVALID_INPUT', status: 400 });
      expect(r.errors![0].message).not.toMatch(/Did you mean|recent|tags/);
      expect(JSON.stringify(details ?? [])).not.toMatch(/Did you mean|recent|tags/);
    }
    expect(variable.errors![0].extensions.details).toEqual([{ field: 's', message: expect.any(String) }]);
    expect(field.errors![0].message).toMatch(/tagz/);
    expect(literal.errors![0].message).toMatch(/recnt/);
    expect(variable.errors![0].message).toMatch(/recnt/);
  });
});
