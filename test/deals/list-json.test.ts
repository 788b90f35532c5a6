// The deals list built as JSON by PostgreSQL (domains/deals/card-json.ts, schema/json-fields.ts): its
// answers are byte for byte what the resolvers write for the same selection (REST and GraphQL, a rich
// fixture), a page costs the same few statements at 20 and 100, it only ever reads the caller's
// organisation, selections it does not serve fall back to the resolvers with the same answers, and the
// Node server sends its text with the right length.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncHorizon } from '../../src/domains/common/sync.js';
import { Prisma } from '../../src/generated/prisma/client.js';
import { listen, type RunningServer } from '../../src/http/server.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { jsonPath } from '../helpers/json-path.js';
import { createDeal, makeLead, makePipeline, makeProduct, makeStatus, makeTag, type PipelineFixture } from '../helpers/factories.js';

const api = useTestApp();
const { graphqlText, resolverText } = jsonPath(api, () => org.key);

let org: Org;
let p: PipelineFixture;
const DAY = 86_400_000;

/** Every field of a REST deal card, as a GraphQL selection (the REST route's own selection). */
const CARD = `id number pipeline_id stage_id lead_id owner_id value total origin loss_reason note won_at lost_at stage_entered_at created_at updated_at
  lead_name lead_surname lead_company lead_email lead_phone lead_avatar lead_status_id
  products { id product_id name price qty custom total } tags { id name color created_at updated_at } pending_todos overdue_todos`;
const PAGINATION = 'pagination { current_page total_pages total_count has_next has_prev next_cursor }';

beforeAll(async () => {
  org = await api.newOrg();
  p = await makePipeline(api, org);
  const status = await makeStatus(api, org);
  // Tag names whose order depends on case and accents: both paths must order them alike.
  const tags = [];
  for (const name of ['beta', 'Alfa', 'alfa', 'Ágil', 'zeta']) tags.push(await makeTag(api, org, name));
  const catalog = await makeProduct(api, org, 'Consultoria', 19.9);
  const big = await makeProduct(api, org, 'Licença anual', 1234567.89);
  const full = await makeLead(api, org, { name: 'Mariana', company: 'Alfa Ltda', email: 'mariana@example.com', surname: 'Souza' } as never);
  const bare = await makeLead(api, org, { name: 'João "Zé" \\ Ñandú' });
  const specs: Record<string, unknown>[] = [
    // Lines with decimals (19.9 × 3 is 59.7, not 59.699999999999996), a one-off line, a big price.
    {
      lead_id: full.id,
      owner_id: org.userId,
      note: 'linha 1\nlinha 2 — “aspas”',
      lead_status_id: status.id,
      tag_ids: tags.map((t) => t.id),
      products: [
        { product_id: catalog.id, qty: 3 },
        { name: 'Ajuste', price: 0.1, qty: 3, custom: true },
        { product_id: big.id, qty: 7 },
      ],
    },
    // No lines: total is the value; no tags; null owner, note, surname, email, status.
    { lead_id: bare.id, value: 10.5 },
    { lead_id: bare.id, value: 0, tag_ids: [tags[4].id, tags[1].id] },
  ];
  for (const s of specs) {
    const r = await createDeal(api, org, { pipeline_id: p.id, stage_id: p.entrada, ...s });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
  const deals = await api.db.prisma.deal.findMany({ where: { tenant_id: org.tenantId }, orderBy: { number: 'asc' } });
  // Won and lost dates, and todos: pending, overdue and done.
  expect(
    (await api.rest('PUT', `/backend/pipeline/deals/${deals[1].id}/stage`, { key: org.key, body: { stage_id: p.ganho } })).status,
  ).toBe(200);
  expect(
    (
      await api.rest('PUT', `/backend/pipeline/deals/${deals[2].id}/stage`, {
        key: org.key,
        body: { stage_id: p.perdido, loss_reason: 'Preço' },
      })
    ).status,
  ).toBe(200);
  for (const [title, due, done] of [
    ['atrasada', -DAY, false],
    ['futura', DAY, false],
    ['feita', -DAY, true],
    ['sem data', null, false],
  ] as const) {
    const body = { title, due_at: due === null ? undefined : new Date(Date.now() + due).toISOString(), done };
    expect((await api.rest('POST', `/backend/pipeline/deals/${deals[0].id}/activities`, { key: org.key, body })).status).toBe(201);
  }
});

describe('deals list as JSON from PostgreSQL', () => {
  it('REST answers byte for byte what the resolvers write for its selection', async () => {
    for (const query of ['', '?sort=oldest', `?stage_id=${p.entrada}`, '?limit=2&page=2', '?search=mariana', '?limit=1&page=9']) {
      const response = await api.raw(`/backend/pipelines/${p.id}/deals${query}`, { headers: { authorization: `Bearer ${org.key}` } });
      expect(response.status).toBe(200);
      const text = await response.text();
      const args = new URLSearchParams(query);
      const vars = {
        id: p.id,
        sort: args.get('sort'),
        stage_id: args.get('stage_id'),
        search: args.get('search'),
        limit: args.has('limit') ? Number(args.get('limit')) : null,
        page: args.has('page') ? Number(args.get('page')) : null,
      };
      const resolved = await resolverText(
        `query ($id: UUID!, $sort: DealSort, $stage_id: UUID, $search: String, $limit: Int, $page: Int) {
          pipelineDeals(id: $id, sort: $sort, stage_id: $stage_id, search: $search, limit: $limit, page: $page) { data { ${CARD} } ${PAGINATION} } }`,
        vars,
      );
      expect(text, query).toBe(JSON.stringify(JSON.parse(resolved).data.pipelineDeals));
    }
    // The fixture is what it should be: the rich card reads as the spec says.
    const body = (await api.rest('GET', `/backend/pipelines/${p.id}/deals?sort=oldest`, { key: org.key })).body;
    expect(body.data[0].products.map((l: any) => [l.price, l.qty, l.total])).toEqual([
      [19.9, 3, 59.7],
      [0.1, 3, 0.3],
      [1234567.89, 7, 8641975.23],
    ]);
    expect(body.data[0]).toMatchObject({
      total: 8642035.23,
      owner_id: org.userId,
      lead_surname: 'Souza',
      pending_todos: 3,
      overdue_todos: 1,
    });
    expect(body.data[1]).toMatchObject({
      products: [],
      tags: [],
      value: 10.5,
      total: 10.5,
      owner_id: null,
      note: null,
      lead_surname: null,
      lead_email: null,
      lead_status_id: null,
      lost_at: null,
    });
    expect(body.data[1].won_at).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/));
    // Time in stage: set by the move into the won stage, at the same instant as won_at.
    expect(body.data[1].stage_entered_at).toBe(body.data[1].won_at);
    expect(Math.abs(Date.parse(body.data[0].stage_entered_at) - Date.parse(body.data[0].created_at))).toBeLessThan(5_000);
    expect(body.data[2]).toMatchObject({ loss_reason: 'Preço', won_at: null, tags: [{ name: 'Alfa' }, { name: 'zeta' }] });
  });

  it('a sync page (updated_since, cursor): REST answers byte for byte what the resolvers write', async () => {
    // The JSON path serves sync pages too. Wait until the fixture is below the sync horizon (another session's open transaction may hold it back).
    const now = Date.now();
    for (let i = 0; i < 3000 && (await syncHorizon(api.db.prisma)).getTime() <= now; i++) await new Promise((r) => setTimeout(r, 10));
    const first = await api.raw(`/backend/pipelines/${p.id}/deals?updated_since=1970-01-01T00:00:00Z&limit=2`, {
      headers: { authorization: `Bearer ${org.key}` },
    });
    const firstText = await first.text();
    const cursor = JSON.parse(firstText).pagination.next_cursor as string;
    expect(cursor).toEqual(expect.any(String));
    const query = `query ($id: UUID!, $since: String, $cursor: String, $limit: Int) {
      pipelineDeals(id: $id, updated_since: $since, cursor: $cursor, limit: $limit) { data { ${CARD} } ${PAGINATION} } }`;
    const resolvedFirst = await resolverText(query, { id: p.id, since: '1970-01-01T00:00:00Z', limit: 2 });
    expect(firstText).toBe(JSON.stringify(JSON.parse(resolvedFirst).data.pipelineDeals));
    const next = await api.raw(`/backend/pipelines/${p.id}/deals?cursor=${encodeURIComponent(cursor)}&limit=2`, {
      headers: { authorization: `Bearer ${org.key}` },
    });
    const nextText = await next.text();
    expect(nextText).toBe(JSON.stringify(JSON.parse(await resolverText(query, { id: p.id, cursor, limit: 2 })).data.pipelineDeals));
    const all = [...JSON.parse(firstText).data, ...JSON.parse(nextText).data];
    expect(all.map((d: { updated_at: string }) => d.updated_at)).toEqual(all.map((d: { updated_at: string }) => d.updated_at).sort());
  });

  it('GraphQL answers byte for byte what the resolvers write, for the selections it serves', async () => {
    const queries: [string, Record<string, unknown>][] = [
      [`query ($id: UUID!) { pipelineDeals(id: $id) { data { ${CARD} } ${PAGINATION} } }`, {}],
      // Aliases, fragments, __typename, a partial card, no pagination.
      [
        `query ($id: UUID!) { a: pipelineDeals(id: $id, limit: 2) { __typename page: pagination { __typename has_prev current_page } d: data { ...Card t: tags { name } } }
         __typename } fragment Card on Deal { __typename n: number total lead_name products { p: price total } ... on Deal { overdue_todos } }`,
        {},
      ],
      // Variables deciding @include / @skip, and two root list fields.
      [
        `query ($id: UUID!, $lines: Boolean!) { one: pipelineDeals(id: $id, sort: oldest, limit: 1) { data { id products @include(if: $lines) { name } tags @skip(if: $lines) { id } } }
         two: pipelineDeals(id: $id, page: 2, limit: 2) { pagination { total_pages has_next } } }`,
        { lines: true },
      ],
      [
        `query ($id: UUID!, $lines: Boolean!) { one: pipelineDeals(id: $id, sort: oldest, limit: 1) { data { id products @include(if: $lines) { name } tags @skip(if: $lines) { id } } } }`,
        { lines: false },
      ],
    ];
    for (const [query, extra] of queries) {
      const variables = { id: p.id, ...extra };
      const served = await graphqlText(query, variables);
      expect(served.status).toBe(200);
      expect(served.text, query).toBe(await resolverText(query, variables));
    }
  });

  it('falls back to the resolvers for selections it does not serve, with their answers', async () => {
    const queries = [
      // Graph-only edges.
      `query ($id: UUID!) { pipelineDeals(id: $id) { data { id lead_name lead { name company } stage { name } owner { id } } } }`,
      // A field beside the list that has no JSON path.
      `query ($id: UUID!) { pipelineDeals(id: $id) { data { id } } pipelineBoard(id: $id) { pipeline { id } } }`,
    ];
    for (const query of queries) {
      let served!: { status: number; text: string };
      const statements = await api.countStatements(async () => (served = await graphqlText(query, { id: p.id })));
      expect(served.status).toBe(200);
      expect(served.text).toBe(await resolverText(query, { id: p.id }));
      // The resolvers' path: the page, then its loaders or the board (the JSON path is one statement).
      expect(statements).toBeGreaterThan(2);
    }
    const withLead = JSON.parse((await graphqlText(queries[0], { id: p.id })).text).data.pipelineDeals.data;
    expect(withLead.map((d: any) => d.lead.name)).toEqual(withLead.map((d: any) => d.lead_name));
  });

  it('errors as the resolvers do: unknown pipeline, a stage of another pipeline, bad variables', async () => {
    const other = await makePipeline(api, org, 'Outro');
    const query = `query ($id: UUID!, $stage: UUID) { pipelineDeals(id: $id, stage_id: $stage) { data { id } } }`;
    for (const variables of [{ id: '00000000-0000-4000-8000-000000000000' }, { id: p.id, stage: other.entrada }]) {
      const answer = JSON.parse((await graphqlText(query, variables)).text);
      const resolved = JSON.parse(await resolverText(query, variables));
      expect(answer.data).toBeNull();
      expect(answer.errors.map((e: any) => [e.message, e.path])).toEqual(resolved.errors.map((e: any) => [e.message, e.path]));
      expect(answer.errors[0].extensions.code).toBe('stage' in variables ? 'INVALID_INPUT' : 'NOT_FOUND');
    }
    expect((await graphqlText(query, { id: 'nope' })).status).toBe(400);
    expect((await api.rest('GET', `/backend/pipelines/${p.id}/deals?stage_id=nope`, { key: org.key })).status).toBe(400);
    expect((await api.rest('GET', `/backend/pipelines/${p.id}/deals?stage_id=${other.entrada}`, { key: org.key })).status).toBe(400);
  });
});

describe('statements', () => {
  it('a page costs the same statements at 20 and 100, at most 3 with the key lookup, on REST and GraphQL', async () => {
    const big = await makePipeline(api, org, 'Grande');
    const lead = await makeLead(api, org, { name: 'Muitos' });
    const tag = await makeTag(api, org, 'muitos');
    await api.db.prisma.deal.createMany({
      data: Array.from({ length: 120 }, (_, i) => ({
        tenant_id: org.tenantId,
        pipeline_id: big.id,
        stage_id: big.entrada,
        lead_id: lead.id,
        number: 10_000 + i,
        value: i,
        total: i,
        created_at: new Date(Date.now() - i * 1000),
      })),
    });
    const rows = await api.db.prisma.deal.findMany({ where: { pipeline_id: big.id }, select: { id: true } });
    await api.db.prisma.dealProduct.createMany({
      data: rows.map((d) => ({ tenant_id: org.tenantId, deal_id: d.id, name: 'L', price: 1.5, qty: 2 })),
    });
    await api.db.prisma.dealTag.createMany({ data: rows.map((d) => ({ tenant_id: org.tenantId, deal_id: d.id, tag_id: tag.id })) });
    await api.db.prisma.activity.createMany({ data: rows.map((d) => ({ tenant_id: org.tenantId, deal_id: d.id, title: 'T' })) });

    await api.rest('GET', `/backend/pipelines/${big.id}/deals?limit=1`, { key: org.key }); // the key's last_used_at write, once
    const counts: Record<string, number> = {};
    for (const limit of [20, 100]) {
      let rest: any;
      counts[`rest ${limit}`] = await api.countStatements(
        async () => (rest = await api.rest('GET', `/backend/pipelines/${big.id}/deals?limit=${limit}`, { key: org.key })),
      );
      expect(rest.body.data).toHaveLength(limit);
      expect(rest.body.data.every((d: any) => d.products[0].total === 3 && d.tags[0].name === 'muitos' && d.pending_todos === 1)).toBe(
        true,
      );
      // GraphQL prices a card's lines and tags at their caps (200, 100): a page of 100 whole cards
      // fits within the cost limit.
      let gql!: { status: number; text: string };
      counts[`graphql ${limit}`] = await api.countStatements(
        async () =>
          (gql = await graphqlText(`query ($id: UUID!, $n: Int) { pipelineDeals(id: $id, limit: $n) { data { ${CARD} } ${PAGINATION} } }`, {
            id: big.id,
            n: limit,
          })),
      );
      expect(gql.status, gql.text.slice(0, 300)).toBe(200);
      expect(JSON.parse(gql.text).data.pipelineDeals.data).toEqual(rest.body.data);
    }
    expect(counts['rest 20']).toBe(counts['rest 100']);
    expect(counts['graphql 20']).toBe(counts['graphql 100']);
    for (const n of Object.values(counts)) expect(n).toBeLessThanOrEqual(3);
  });
});

describe('tenant isolation', () => {
  it('another organisation reads none of these deals, and its own list holds only its own', async () => {
    const other = await api.newOrg('Outra');
    const theirs = await makePipeline(api, other);
    const lead = await makeLead(api, other, { name: 'Deles' });
    expect((await createDeal(api, other, { pipeline_id: theirs.id, stage_id: theirs.entrada, lead_id: lead.id, value: 1 })).status).toBe(
      201,
    );

    expect((await api.rest('GET', `/backend/pipelines/${p.id}/deals`, { key: other.key })).status).toBe(404);
    const gql = JSON.parse(
      (await graphqlText(`query ($id: UUID!) { pipelineDeals(id: $id) { data { id } } }`, { id: p.id }, other.key)).text,
    );
    expect(gql.errors[0].extensions.code).toBe('NOT_FOUND');
    const own = (await api.rest('GET', `/backend/pipelines/${theirs.id}/deals`, { key: other.key })).body;
    expect(own.data.map((d: any) => d.lead_name)).toEqual(['Deles']);
    expect(own.pagination.total_count).toBe(1);
  });

  it('$tenantQueryDirect binds the tenant like $tenantQuery, and runs inside a transaction when given one', async () => {
    const db = api.app.deps.tenants.for(org.tenantId);
    expect(() => db.$tenantQueryDirect(() => Prisma.sql`SELECT count(*)::int AS n FROM deals`)).toThrow(/tenant/);
    const [mine] = await db.$tenantQueryDirect<{ n: number }>(
      (tenant) => Prisma.sql`SELECT count(*)::int AS n FROM deals WHERE tenant_id = ${tenant}`,
    );
    expect(mine.n).toBe(await api.db.prisma.deal.count({ where: { tenant_id: org.tenantId } }));
    const seen = await db
      .$transaction(async (tx) => {
        await tx.tag.create({ data: { name: 'só na transação', color: '#000000' } });
        // Not part of a transaction's type; at run time it must not escape to another connection.
        const [row] = await (tx as unknown as typeof db).$tenantQueryDirect<{ n: number }>(
          (tenant) => Prisma.sql`SELECT count(*)::int AS n FROM tags WHERE tenant_id = ${tenant} AND name = 'só na transação'`,
        );
        throw Object.assign(new Error('rollback'), { row });
      })
      .catch((e) => e.row as { n: number });
    expect(seen.n).toBe(1);
  });
});

describe('over a socket', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await listen(api.app, { ...api.config, host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('sends each answer with its own length, one after the other on one connection', async () => {
    const headers = { authorization: `Bearer ${org.key}` };
    for (const limit of [3, 1, 2]) {
      const response = await fetch(`${server.url}/backend/pipelines/${p.id}/deals?limit=${limit}`, { headers });
      const bytes = Buffer.from(await response.arrayBuffer());
      expect(Number(response.headers.get('content-length'))).toBe(bytes.byteLength);
      expect(JSON.parse(bytes.toString('utf8')).data).toHaveLength(limit);
    }
  });
});
