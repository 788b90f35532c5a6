// The deals graph: a board rendered in one GraphQL request (Pipeline.stages → Stage.deals → Deal.lead,
// products, tags, Lead.deals) without N+1, cursor pagination of a column, and the mutations.
import { beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../gql/index.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { createDeal, makeLead, makePipeline, makeTag, type PipelineFixture } from '../helpers/factories.js';

const api = useTestApp();

// The page info every column query selects.
graphql(`
  fragment DealsPageInfo on PageInfo {
    hasNextPage
    hasPreviousPage
    endCursor
    startCursor
  }
`);

const BoardGql = graphql(`
  query DealsBoard($id: UUID!, $first: Int, $search: String) {
    pipelineBoard(id: $id, search: $search) {
      total_deals
      total_amount
      stages {
        deal_count
        total
        stage {
          id
        }
      }
      pipeline {
        id
        stages(first: 10) {
          id
          name
          deals(first: $first, search: $search) {
            edges {
              cursor
              node {
                id
                number
                total
                lead_name
                pending_todos
                lead {
                  id
                  name
                }
                products(first: 5) {
                  name
                  total
                }
                tags(first: 5) {
                  name
                }
              }
            }
            pageInfo {
              ...DealsPageInfo
            }
          }
        }
      }
    }
  }
`);

const ColumnGql = graphql(`
  query DealsColumn($id: UUID!, $first: Int, $after: String, $last: Int, $before: String, $sort: DealSort) {
    pipelineBoard(id: $id) {
      pipeline {
        stages(first: 4) {
          id
          deals(first: $first, after: $after, last: $last, before: $before, sort: $sort) {
            edges {
              node {
                number
              }
            }
            pageInfo {
              ...DealsPageInfo
            }
          }
        }
      }
    }
  }
`);

const ListGql = graphql(`
  query DealsList($id: UUID!, $limit: Int, $page: Int, $sort: DealSort) {
    pipelineDeals(id: $id, limit: $limit, page: $page, sort: $sort) {
      data {
        id
        number
        lead_name
        products {
          name
        }
        tags {
          name
        }
        pending_todos
        overdue_todos
      }
      pagination {
        current_page
        total_pages
        total_count
        has_next
        has_prev
      }
    }
  }
`);

const CreateGql = graphql(`
  mutation DealsCreate($pipeline_id: UUID!, $stage_id: UUID!, $lead_id: UUID, $loss_reason: String, $products: [DealProductInput!]) {
    createDeal(pipeline_id: $pipeline_id, stage_id: $stage_id, lead_id: $lead_id, loss_reason: $loss_reason, products: $products) {
      id
      number
      total
      loss_reason
      lost_at
      stage {
        name
        kind
      }
      owner {
        id
      }
    }
  }
`);

const MoveGql = graphql(`
  mutation DealsMove($id: UUID!, $stage_id: UUID!, $loss_reason: String) {
    moveDeal(id: $id, stage_id: $stage_id, loss_reason: $loss_reason) {
      stage_id
      won_at
      lost_at
      loss_reason
    }
  }
`);

const HistoryGql = graphql(`
  query DealsHistory($id: UUID!) {
    dealHistory(id: $id) {
      type
      actor_name
    }
    dealActivities(id: $id) {
      title
    }
    deal(id: $id) {
      number
      lead {
        name
        deals(first: 5) {
          edges {
            node {
              number
            }
          }
        }
      }
    }
  }
`);

const EditGql = graphql(`
  mutation DealsEdit($id: UUID!, $tag_id: UUID!, $value: Float, $owner_id: UUID) {
    updateDeal(id: $id, value: $value, owner_id: $owner_id) {
      value
      total
      owner {
        name
      }
    }
    addDealTag(id: $id, tag_id: $tag_id) {
      success
    }
  }
`);

const UntagDeleteGql = graphql(`
  mutation DealsUntagDelete($id: UUID!, $tag_id: UUID!) {
    removeDealTag(id: $id, tag_id: $tag_id) {
      success
    }
    deleteDeal(id: $id) {
      success
    }
  }
`);

const CountsGql = graphql(`
  query DealsColumnCounts($id: UUID!, $first: Int, $search: String) {
    pipelineBoard(id: $id) {
      pipeline {
        stages {
          id
          deals(first: $first, search: $search) {
            totalCount
            nodes {
              number
            }
            edges {
              node {
                number
              }
            }
            pageInfo {
              ...DealsPageInfo
            }
          }
        }
      }
    }
  }
`);

const LeadDealsGql = graphql(`
  query LeadDealsPage($id: UUID!, $first: Int) {
    lead(id: $id) {
      deals(first: $first) {
        totalCount
        nodes {
          number
        }
        pageInfo {
          ...DealsPageInfo
        }
      }
    }
  }
`);

let org: Org;
let p: PipelineFixture;
let ana: { id: string };
const byStage: Record<string, number[]> = {};

beforeAll(async () => {
  org = await api.newOrg();
  p = await makePipeline(api, org);
  const tag = await makeTag(api, org, 'vip');
  const leads = [
    await makeLead(api, org, { name: 'Ana' }),
    await makeLead(api, org, { name: 'Bia' }),
    await makeLead(api, org, { name: 'Caio' }),
  ];
  ana = leads[0];
  // 5 deals in Entrada, 3 in Em andamento, 1 won, 0 lost; created one after another.
  const plan = [p.entrada, p.entrada, p.andamento, p.entrada, p.ganho, p.andamento, p.entrada, p.andamento, p.entrada];
  for (const [i, stage] of plan.entries()) {
    const r = await createDeal(api, org, {
      pipeline_id: p.id,
      stage_id: stage,
      lead_id: leads[i % 3].id,
      tag_ids: [tag.id],
      products: [{ name: `L${i}`, price: 10, qty: i + 1 }],
    });
    expect(r.status).toBe(201);
    await api.db.prisma.deal.update({
      where: { tenant_id_id: { tenant_id: org.tenantId, id: r.body.id } },
      data: { created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)) },
    });
    (byStage[stage] ??= []).unshift(r.body.number);
  }
});

describe('deals graph', () => {
  it('renders a board in one request: columns, deals, lead, lines and tags', async () => {
    const r = await api.gql(BoardGql, { id: p.id, first: 2 }, org.key);
    expect(r.errors).toBeUndefined();
    const board = r.data!.pipelineBoard;
    expect(board.total_deals).toBe(9);
    expect(board.stages.map((s) => s.deal_count)).toEqual([5, 3, 1, 0]);
    const columns = board.pipeline.stages;
    expect(columns.map((s) => s.deals.edges.map((e) => e.node.number))).toEqual([
      byStage[p.entrada].slice(0, 2),
      byStage[p.andamento].slice(0, 2),
      byStage[p.ganho],
      [],
    ]);
    expect(columns.map((s) => s.deals.pageInfo.hasNextPage)).toEqual([true, true, false, false]);
    const node = columns[0].deals.edges[0].node;
    expect(node.lead.name).toBe(node.lead_name);
    expect(node.products).toHaveLength(1);
    expect(node.tags).toEqual([{ name: 'vip' }]);
  });

  it('costs the same number of statements for 1 or 20 deals per column', async () => {
    await api.gql(BoardGql, { id: p.id, first: 1 }, org.key);
    const small = await api.countStatements(() => api.gql(BoardGql, { id: p.id, first: 1 }, org.key));
    const large = await api.countStatements(() => api.gql(BoardGql, { id: p.id, first: 20 }, org.key));
    expect(small).toBe(large);
  });

  it('pages a column forwards and backwards with cursors, newest or oldest first', async () => {
    const col = async (vars: Record<string, unknown>) => {
      const r = await api.gql(ColumnGql, { id: p.id, ...vars }, org.key);
      expect(r.errors).toBeUndefined();
      return r.data!.pipelineBoard.pipeline.stages[0].deals;
    };
    const all = byStage[p.entrada];
    const first = await col({ first: 2 });
    expect(first.edges.map((e) => e.node.number)).toEqual(all.slice(0, 2));
    const second = await col({ first: 2, after: first.pageInfo.endCursor });
    expect(second.edges.map((e) => e.node.number)).toEqual(all.slice(2, 4));
    expect(second.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
    const third = await col({ first: 2, after: second.pageInfo.endCursor });
    expect(third.edges.map((e) => e.node.number)).toEqual(all.slice(4));
    expect(third.pageInfo.hasNextPage).toBe(false);
    const back = await col({ last: 2, before: third.pageInfo.startCursor });
    expect(back.edges.map((e) => e.node.number)).toEqual(all.slice(2, 4));
    const oldest = await col({ first: 3, sort: 'oldest' });
    expect(oldest.edges.map((e) => e.node.number)).toEqual([...all].reverse().slice(0, 3));
    const capped = await col({ first: 500 });
    expect(capped.edges).toHaveLength(5);
  });

  it('connections give totalCount (under the filters) and nodes; an empty page has null cursors', async () => {
    const r = await api.gql(CountsGql, { id: p.id, first: 2 }, org.key);
    expect(r.errors).toBeUndefined();
    const columns = r.data!.pipelineBoard.pipeline.stages.map((s) => s.deals);
    expect(columns.map((c) => c.totalCount)).toEqual([5, 3, 1, 0]);
    for (const c of columns) expect(c.nodes).toEqual(c.edges.map((e) => e.node));
    expect(columns[0].nodes.map((n) => n.number)).toEqual(byStage[p.entrada].slice(0, 2));
    expect(columns[3].pageInfo).toEqual({ hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null });
    // Past the last page: still null, not the cursor that was given.
    const past = await api.gql(ColumnGql, { id: p.id, first: 2, after: columns[2].pageInfo.endCursor }, org.key);
    expect(past.data!.pipelineBoard.pipeline.stages[2].deals.pageInfo).toMatchObject({ startCursor: null, endCursor: null });
    // Ana's deals are the 1st, 4th and 7th created, all in Entrada.
    const filtered = await api.gql(CountsGql, { id: p.id, first: 1, search: 'Ana' }, org.key);
    expect(filtered.data!.pipelineBoard.pipeline.stages.map((s) => s.deals.totalCount)).toEqual([3, 0, 0, 0]);

    const lead = await api.gql(LeadDealsGql, { id: ana.id, first: 2 }, org.key);
    expect(lead.errors).toBeUndefined();
    expect(lead.data!.lead.deals.totalCount).toBe(3);
    expect(lead.data!.lead.deals.nodes).toHaveLength(2);
    const nobody = await makeLead(api, org, { name: 'Sem negócios' });
    const empty = await api.gql(LeadDealsGql, { id: nobody.id, first: 2 }, org.key);
    expect(empty.data!.lead.deals).toEqual({
      totalCount: 0,
      nodes: [],
      pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null },
    });
  });

  it('counts every column in one more statement, and only when totalCount is asked for', async () => {
    await api.gql(CountsGql, { id: p.id, first: 2 }, org.key);
    const withoutCounts = await api.countStatements(() => api.gql(ColumnGql, { id: p.id, first: 2 }, org.key));
    const withCounts = await api.countStatements(() => api.gql(CountsGql, { id: p.id, first: 2 }, org.key));
    expect(withCounts).toBe(withoutCounts + 1);
  });

  it('serves the list with the same shape as REST', async () => {
    const r = await api.gql(ListGql, { id: p.id, limit: 4, page: 2 }, org.key);
    expect(r.errors).toBeUndefined();
    expect(r.data!.pipelineDeals.pagination).toEqual({ current_page: 2, total_pages: 3, total_count: 9, has_next: true, has_prev: true });
    const rest = await api.rest('GET', `/backend/pipelines/${p.id}/deals?limit=4&page=2`, { key: org.key });
    expect(r.data!.pipelineDeals.data.map((d) => d.number)).toEqual(rest.body.data.map((d: any) => d.number));
  });

  it('creates and moves deals; refusals carry the error kind', async () => {
    const lead = await makeLead(api, org, { name: 'Gql' });
    const refused = await api.gql(CreateGql, { pipeline_id: p.id, stage_id: p.perdido, lead_id: lead.id }, org.key);
    expect(refused.errors?.[0].extensions).toMatchObject({ code: 'INVALID_INPUT', status: 400 });
    const r = await api.gql(
      CreateGql,
      { pipeline_id: p.id, stage_id: p.perdido, lead_id: lead.id, loss_reason: 'Timing', products: [{ name: 'X', price: 1.5, qty: 2 }] },
      org.key,
    );
    expect(r.errors).toBeUndefined();
    expect(r.data!.createDeal).toMatchObject({ total: 3, loss_reason: 'Timing', stage: { name: 'Perdido', kind: 'lost' }, owner: null });
    const m = await api.gql(MoveGql, { id: r.data!.createDeal.id, stage_id: p.ganho }, org.key);
    expect(m.data!.moveDeal).toMatchObject({ stage_id: p.ganho, lost_at: null, loss_reason: null });
    expect(m.data!.moveDeal.won_at).toBeTruthy();
    const h = await api.gql(HistoryGql, { id: r.data!.createDeal.id }, org.key);
    expect(h.data!.dealHistory.map((e) => e.type)).toEqual(['created', 'won']);
    expect(h.data!.deal.lead.name).toBe('Gql');
    expect(h.data!.deal.lead.deals.edges.map((e) => e.node.number)).toEqual([r.data!.createDeal.number]);
    const missing = await api.gql(HistoryGql, { id: '00000000-0000-4000-8000-000000000000' }, org.key);
    expect(missing.errors?.[0].extensions).toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });

  it('edits, tags, untags and deletes through GraphQL; a bad cursor is invalid input', async () => {
    const lead = await makeLead(api, org, { name: 'Edit' });
    const tag = await makeTag(api, org, 'gql-tag');
    const d = (await createDeal(api, org, { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id })).body;
    const e = await api.gql(EditGql, { id: d.id, tag_id: tag.id, value: 42.5, owner_id: org.userId }, org.key);
    expect(e.errors).toBeUndefined();
    expect(e.data!.updateDeal).toMatchObject({ value: 42.5, total: 42.5, owner: { name: 'Owner' } });
    expect((await api.rest('GET', `/backend/pipeline/deals/${d.id}`, { key: org.key })).body.tags.map((t: any) => t.id)).toEqual([tag.id]);
    const operator = await api.keyFor(org, 'operator');
    const refused = await api.gql(UntagDeleteGql, { id: d.id, tag_id: tag.id }, operator);
    expect(refused.errors?.[0].extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    const ok = await api.gql(UntagDeleteGql, { id: d.id, tag_id: tag.id }, org.key);
    expect(ok.errors).toBeUndefined();
    expect((await api.rest('GET', `/backend/pipeline/deals/${d.id}`, { key: org.key })).status).toBe(404);
    const bad = await api.gql(ColumnGql, { id: p.id, first: 2, after: 'not-a-cursor' }, org.key);
    expect(bad.errors?.[0].extensions).toMatchObject({ code: 'INVALID_INPUT' });
  });
});
