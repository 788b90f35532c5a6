// Groups and pipelines: listing, creation with defaults, reorder, deletion, permissions, tenant isolation,
// and the GraphQL graph (groups → pipelines → stages in one request).
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { makeDeal, makeLead, makePipeline, makeProduct, makeTag } from '../helpers/factories.js';
import { insertDeal, insertDealLine } from '../helpers/fixtures.js';
import { graphql } from '../gql/index.js';
import { expectDense, snapshot } from './helpers.js';

const api = useTestApp();

const BoardConfig = graphql(`
  query BoardConfig {
    pipelineGroups {
      id
      name
      position
      pipelines {
        totalCount
        nodes {
          id
          name
          position
          loss_reasons
          group {
            id
          }
          stages {
            id
            name
            kind
            position
            color
            pipeline {
              id
            }
          }
        }
      }
    }
  }
`);

const CreatePipelineGql = graphql(`
  mutation CreatePipelineGql($name: String!, $new_group_name: String) {
    createPipeline(name: $name, new_group_name: $new_group_name) {
      id
      group {
        name
      }
      stages {
        name
        kind
      }
    }
  }
`);

const ListingGql = graphql(`
  query ListingGql {
    pipelines {
      groups {
        id
        name
      }
      pipelines {
        id
        group_id
        stages {
          name
        }
      }
    }
  }
`);

describe('groups', () => {
  it('creates, lists in position order, renames and moves groups', async () => {
    const org = await api.newOrg();
    const a = await api.rest('POST', '/backend/pipeline/groups', { key: org.key, body: { name: 'A' } });
    expect(a.status).toBe(201);
    expect(a.body).toEqual({ id: expect.any(String), name: 'A', position: 0, created_at: expect.any(String) });
    const b = await api.rest('POST', '/backend/pipeline/groups', { key: org.key, body: { name: 'B' } });
    const c = await api.rest('POST', '/backend/pipeline/groups', { key: org.key, body: { name: 'C' } });
    expect([b.body.position, c.body.position]).toEqual([1, 2]);

    const list = await api.rest('GET', '/backend/pipeline/groups', { key: org.key });
    expect(list.status).toBe(200);
    expect(list.body.map((g: any) => g.name)).toEqual(['A', 'B', 'C']);
    expect(Object.keys(list.body[0]).sort()).toEqual(['created_at', 'id', 'name', 'position']);

    const renamed = await api.rest('PUT', `/backend/pipeline/groups/${b.body.id}`, { key: org.key, body: { name: '  Bê  ' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: b.body.id, name: 'Bê', position: 1 });

    const moved = await api.rest('PUT', `/backend/pipeline/groups/${c.body.id}`, { key: org.key, body: { name: 'C', position: 0 } });
    expect(moved.body.position).toBe(0);
    const after = await api.rest('GET', '/backend/pipeline/groups', { key: org.key });
    expect(after.body.map((g: any) => [g.name, g.position])).toEqual([
      ['C', 0],
      ['A', 1],
      ['Bê', 2],
    ]);
  });

  it('validates names and rejects unknown ids', async () => {
    const org = await api.newOrg();
    expect((await api.rest('POST', '/backend/pipeline/groups', { key: org.key, body: { name: '  ' } })).body.code).toBe(
      'ERR_INVALID_INPUT',
    );
    expect((await api.rest('POST', '/backend/pipeline/groups', { key: org.key, body: {} })).status).toBe(400);
    const missing = await api.rest('PUT', '/backend/pipeline/groups/00000000-0000-4000-8000-000000000000', {
      key: org.key,
      body: { name: 'x' },
    });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('ERR_NOT_FOUND');
    expect((await api.rest('DELETE', '/backend/pipeline/groups/not-a-uuid', { key: org.key })).body.code).toBe('ERR_INVALID_INPUT');
  });

  it('deleting a group that holds pipelines is 409 with the count and changes nothing; an empty group is deleted', async () => {
    const org = await api.newOrg();
    const p1 = await makePipeline(api, org, { new_group_name: 'Cheio' });
    await makePipeline(api, org, { new_group_name: undefined, group_id: p1.group_id, name: 'Outro' });
    const empty = await api.rest('POST', '/backend/pipeline/groups', { key: org.key, body: { name: 'Vazio' } });
    const last = await api.rest('POST', '/backend/pipeline/groups', { key: org.key, body: { name: 'Último' } });

    const before = await snapshot(api, org.tenantId);
    const r = await api.rest('DELETE', `/backend/pipeline/groups/${p1.group_id}`, { key: org.key });
    expect(r.status).toBe(409);
    expect(r.body).toEqual({ code: 'ERR_CONFLICT', message: expect.any(String), pipeline_count: 2 });
    expect(await snapshot(api, org.tenantId)).toEqual(before);

    const ok = await api.rest('DELETE', `/backend/pipeline/groups/${empty.body.id}`, { key: org.key });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ success: true });
    const groups = await api.rest('GET', '/backend/pipeline/groups', { key: org.key });
    expect(groups.body.map((g: any) => [g.id, g.position])).toEqual([
      [p1.group_id, 0],
      [last.body.id, 1],
    ]);
    expect((await api.rest('DELETE', `/backend/pipeline/groups/${empty.body.id}`, { key: org.key })).status).toBe(404);
  });
});

describe('pipelines', () => {
  it('a new pipeline has the four default stages, default color and default loss reasons', async () => {
    const org = await api.newOrg();
    const r = await api.rest('POST', '/backend/pipelines', {
      key: org.key,
      body: { name: 'Vendas', description: 'Funil principal', new_group_name: 'Comercial' },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      name: 'Vendas',
      description: 'Funil principal',
      position: 0,
      group_id: expect.any(String),
      created_at: expect.any(String),
    });
    expect(r.body.stages.map((s: any) => [s.name, s.kind, s.position, s.color])).toEqual([
      ['Entrada', null, 0, '215 16% 47%'],
      ['Em andamento', null, 1, '215 16% 47%'],
      ['Ganho', 'won', 2, '215 16% 47%'],
      ['Perdido', 'lost', 3, '215 16% 47%'],
    ]);
    expect(r.body.loss_reasons).toEqual(['Preço', 'Concorrência', 'Sem resposta', 'Sem orçamento', 'Timing']);
    expect(r.body.stages.every((s: any) => s.pipeline_id === r.body.id)).toBe(true);

    // new_group_name created the group.
    const groups = await api.rest('GET', '/backend/pipeline/groups', { key: org.key });
    expect(groups.body).toEqual([{ id: r.body.group_id, name: 'Comercial', position: 0, created_at: expect.any(String) }]);

    const one = await api.rest('GET', `/backend/pipelines/${r.body.id}`, { key: org.key });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(r.body);
    // Stored as data.
    const stored = await api.db.prisma.stage.findMany({ where: { pipeline_id: r.body.id }, orderBy: { position: 'asc' } });
    expect(stored.map((s) => s.tenant_id)).toEqual(Array(4).fill(org.tenantId));
  });

  it('appends pipelines to an existing group; requires exactly one of group_id or new_group_name', async () => {
    const org = await api.newOrg();
    const first = await makePipeline(api, org);
    const second = await makePipeline(api, org, { new_group_name: undefined, group_id: first.group_id, name: 'Pós-venda' });
    expect(second).toMatchObject({ group_id: first.group_id, position: 1, description: '' });

    const before = await snapshot(api, org.tenantId);
    const neither = await api.rest('POST', '/backend/pipelines', { key: org.key, body: { name: 'X' } });
    expect(neither.status).toBe(400);
    expect(neither.body.code).toBe('ERR_INVALID_INPUT');
    const both = await api.rest('POST', '/backend/pipelines', {
      key: org.key,
      body: { name: 'X', group_id: first.group_id, new_group_name: 'Novo' },
    });
    expect(both.status).toBe(400);
    const noName = await api.rest('POST', '/backend/pipelines', { key: org.key, body: { name: ' ', new_group_name: 'Novo' } });
    expect(noName.status).toBe(400);
    const unknownGroup = await api.rest('POST', '/backend/pipelines', {
      key: org.key,
      body: { name: 'X', group_id: '00000000-0000-4000-8000-000000000000' },
    });
    expect(unknownGroup.status).toBe(404);
    expect(unknownGroup.body.code).toBe('ERR_NOT_FOUND');
    expect(await snapshot(api, org.tenantId)).toEqual(before);

    expect((await api.rest('GET', '/backend/pipelines/00000000-0000-4000-8000-000000000000', { key: org.key })).status).toBe(404);
    expect((await api.rest('GET', '/backend/pipelines/nope', { key: org.key })).body.code).toBe('ERR_INVALID_INPUT');
  });

  it('GET /backend/pipelines lists groups and pipelines by position, each pipeline with group_id and stages', async () => {
    const org = await api.newOrg();
    const a1 = await makePipeline(api, org, { name: 'A1', new_group_name: 'A' });
    const b1 = await makePipeline(api, org, { name: 'B1', new_group_name: 'B' });
    const a2 = await makePipeline(api, org, { name: 'A2', new_group_name: undefined, group_id: a1.group_id });
    const r = await api.rest('GET', '/backend/pipelines', { key: org.key });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['groups', 'pipelines']);
    expect(r.body.groups.map((g: any) => [g.name, g.position])).toEqual([
      ['A', 0],
      ['B', 1],
    ]);
    expect(r.body.pipelines.map((p: any) => [p.name, p.group_id, p.position])).toEqual([
      ['A1', a1.group_id, 0],
      ['A2', a1.group_id, 1],
      ['B1', b1.group_id, 0],
    ]);
    expect(r.body.pipelines[1].stages.map((s: any) => s.name)).toEqual(['Entrada', 'Em andamento', 'Ganho', 'Perdido']);
    expect(r.body.pipelines[1].id).toBe(a2.id);
    expect(r.body.pipelines[0].group).toBeUndefined();
  });

  it('the listing costs the same number of statements for 1 or 6 pipelines', async () => {
    const org = await api.newOrg();
    const first = await makePipeline(api, org);
    await api.rest('GET', '/backend/pipelines', { key: org.key }); // warm up
    const one = await api.countStatements(() => api.rest('GET', '/backend/pipelines', { key: org.key }));
    for (let i = 0; i < 5; i++)
      await makePipeline(api, org, {
        name: `P${i}`,
        new_group_name: i % 2 ? `G${i}` : undefined,
        group_id: i % 2 ? undefined : first.group_id,
      });
    let count = 0;
    const six = await api.countStatements(async () => {
      const r = await api.rest('GET', '/backend/pipelines', { key: org.key });
      count = r.body.pipelines.length;
    });
    expect(count).toBe(6);
    expect(six).toBe(one);
    // Authentication, then groups, pipelines and their stages: one statement each.
    expect(six).toBeLessThanOrEqual(6);
    if (process.env.DEBUG_STATEMENTS) console.log('listing statements', one, six);
  });

  it('concurrent creations keep group and pipeline positions dense', async () => {
    const org = await api.newOrg();
    const group = await api.rest('POST', '/backend/pipeline/groups', { key: org.key, body: { name: 'G' } });
    const results = await Promise.all([
      ...Array.from({ length: 6 }, (_, i) =>
        api.rest('POST', '/backend/pipelines', { key: org.key, body: { name: `P${i}`, group_id: group.body.id } }),
      ),
      ...Array.from({ length: 4 }, (_, i) =>
        api.rest('POST', '/backend/pipelines', { key: org.key, body: { name: `N${i}`, new_group_name: `Novo ${i}` } }),
      ),
      ...Array.from({ length: 3 }, (_, i) => api.rest('POST', '/backend/pipeline/groups', { key: org.key, body: { name: `Vazio ${i}` } })),
    ]);
    for (const r of results) expect(r.status, JSON.stringify(r.body)).toBe(201);
    const where = { tenant_id: org.tenantId };
    const pipelines = await api.db.prisma.pipeline.findMany({ where: { ...where, group_id: group.body.id } });
    expectDense(pipelines.map((p) => p.position));
    const groups = await api.db.prisma.pipelineGroup.findMany({ where });
    expect(groups).toHaveLength(8);
    expectDense(groups.map((g) => g.position));
  });

  it('reorder moves a pipeline within and across groups; positions stay 0..n-1', async () => {
    const org = await api.newOrg();
    const p1 = await makePipeline(api, org, { name: 'P1', new_group_name: 'G1' });
    const g1 = p1.group_id;
    const p2 = await makePipeline(api, org, { name: 'P2', new_group_name: undefined, group_id: g1 });
    const p3 = await makePipeline(api, org, { name: 'P3', new_group_name: undefined, group_id: g1 });
    const q1 = await makePipeline(api, org, { name: 'Q1', new_group_name: 'G2' });
    const g2 = q1.group_id;

    const order = (body: any) => body.pipelines.map((p: any) => `${p.name}@${p.group_id === g1 ? 'G1' : 'G2'}:${p.position}`);

    // P3 before P1 in the same group.
    let r = await api.rest('PUT', '/backend/pipelines/reorder', {
      key: org.key,
      body: { pipeline_id: p3.id, group_id: g1, before_pipeline_id: p1.id },
    });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['groups', 'pipelines']);
    expect(order(r.body)).toEqual(['P3@G1:0', 'P1@G1:1', 'P2@G1:2', 'Q1@G2:0']);

    // P3 to the end of its group.
    r = await api.rest('PUT', '/backend/pipelines/reorder', { key: org.key, body: { pipeline_id: p3.id, group_id: g1 } });
    expect(order(r.body)).toEqual(['P1@G1:0', 'P2@G1:1', 'P3@G1:2', 'Q1@G2:0']);

    // P1 into G2 before Q1: both groups stay dense.
    r = await api.rest('PUT', '/backend/pipelines/reorder', {
      key: org.key,
      body: { pipeline_id: p1.id, group_id: g2, before_pipeline_id: q1.id },
    });
    expect(order(r.body)).toEqual(['P2@G1:0', 'P3@G1:1', 'P1@G2:0', 'Q1@G2:1']);

    // P2 into G2 last.
    r = await api.rest('PUT', '/backend/pipelines/reorder', { key: org.key, body: { pipeline_id: p2.id, group_id: g2 } });
    expect(order(r.body)).toEqual(['P3@G1:0', 'P1@G2:0', 'Q1@G2:1', 'P2@G2:2']);
    const stored = await api.db.prisma.pipeline.findMany({ where: { tenant_id: org.tenantId, group_id: g2 } });
    expectDense(stored.map((p) => p.position));

    // Refusals change nothing.
    const before = await snapshot(api, org.tenantId);
    const wrongGroup = await api.rest('PUT', '/backend/pipelines/reorder', {
      key: org.key,
      body: { pipeline_id: p3.id, group_id: g1, before_pipeline_id: q1.id },
    });
    expect(wrongGroup.status).toBe(400);
    expect(wrongGroup.body.code).toBe('ERR_INVALID_INPUT');
    const self = await api.rest('PUT', '/backend/pipelines/reorder', {
      key: org.key,
      body: { pipeline_id: p3.id, group_id: g1, before_pipeline_id: p3.id },
    });
    expect(self.status).toBe(400);
    const missing = await api.rest('PUT', '/backend/pipelines/reorder', { key: org.key, body: { pipeline_id: p3.id } });
    expect(missing.status).toBe(400);
    const unknown = await api.rest('PUT', '/backend/pipelines/reorder', {
      key: org.key,
      body: { pipeline_id: p3.id, group_id: '00000000-0000-4000-8000-000000000000' },
    });
    expect(unknown.status).toBe(404);
    expect(await snapshot(api, org.tenantId)).toEqual(before);
  });

  it('deleting a pipeline removes its stages, deals, lines, tags, activities and history, and nothing else', async () => {
    const org = await api.newOrg();
    const doomed = await makePipeline(api, org, { name: 'Doomed', new_group_name: 'G' });
    const kept = await makePipeline(api, org, { name: 'Kept', new_group_name: undefined, group_id: doomed.group_id });
    const third = await makePipeline(api, org, { name: 'Third', new_group_name: undefined, group_id: doomed.group_id });
    const product = await makeProduct(api, org, 'Plano', 100);
    const tag = await makeTag(api, org, 'vip', '#ff0000');
    const lead = await makeLead(api, org);
    const p = api.db.prisma;
    // The doomed deal through the API: a catalog line, a tag, an activity and its 'created' event.
    const doomedDeal = await makeDeal(api, org, {
      pipeline_id: doomed.id,
      stage_id: doomed.stages[0].id,
      lead_id: lead.id,
      products: [{ product_id: product.id }],
      tag_ids: [tag.id],
    });
    const activity = await api.rest('POST', `/backend/pipeline/deals/${doomedDeal.id}/activities`, {
      key: org.key,
      body: { title: 'Ligar' },
    });
    expect(activity.status).toBe(201);
    expect(await p.dealEvent.count({ where: { deal_id: doomedDeal.id } })).toBe(1);
    // The kept deal raw: a deal without history (the API always writes a 'created' event), so that no
    // event at all is left once the doomed deal's history is gone.
    const keptDeal = await insertDeal(p, {
      tenantId: org.tenantId,
      pipelineId: kept.id,
      stageId: kept.stages[1].id,
      leadId: lead.id,
      total: 50,
    });
    await insertDealLine(p, { tenantId: org.tenantId, dealId: keptDeal.id, productId: product.id, name: 'Plano', price: 50 });

    const r = await api.rest('DELETE', `/backend/pipelines/${doomed.id}`, { key: org.key });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true });

    const where = { tenant_id: org.tenantId };
    expect(await p.pipeline.findMany({ where, select: { id: true, position: true }, orderBy: { position: 'asc' } })).toEqual([
      { id: kept.id, position: 0 },
      { id: third.id, position: 1 },
    ]);
    expect(await p.stage.count({ where: { pipeline_id: doomed.id } })).toBe(0);
    expect(await p.stage.count({ where: { pipeline_id: kept.id } })).toBe(4);
    expect((await p.deal.findMany({ where })).map((d) => d.id)).toEqual([keptDeal.id]);
    expect(await p.dealProduct.count({ where })).toBe(1);
    expect(await p.dealTag.count({ where })).toBe(0);
    expect(await p.activity.count({ where })).toBe(0);
    expect(await p.dealEvent.count({ where })).toBe(0);
    expect(await p.lead.count({ where })).toBe(1);
    expect(await p.tag.count({ where })).toBe(1);
    expect(await p.product.count({ where })).toBe(1);
    expect(await p.pipelineGroup.count({ where })).toBe(1);

    expect((await api.rest('GET', `/backend/pipelines/${doomed.id}`, { key: org.key })).status).toBe(404);
    expect((await api.rest('DELETE', `/backend/pipelines/${doomed.id}`, { key: org.key })).status).toBe(404);
  });
});

describe('permissions and tenant isolation', () => {
  it('operators and keys without pipeline.manage cannot write; pipeline.view is needed to read', async () => {
    const org = await api.newOrg();
    const p = await makePipeline(api, org);
    const operator = await api.keyFor(org, 'operator');
    const viewOnly = await api.keyFor(org, 'admin', ['pipeline.view']);
    const noView = await api.keyFor(org, 'admin', ['pipeline.manage']);
    const before = await snapshot(api, org.tenantId);

    for (const key of [operator, viewOnly]) {
      expect((await api.rest('GET', '/backend/pipelines', { key })).status).toBe(200);
      expect((await api.rest('GET', `/backend/pipelines/${p.id}`, { key })).status).toBe(200);
      expect((await api.rest('GET', '/backend/pipeline/groups', { key })).status).toBe(200);
      const writes = [
        api.rest('POST', '/backend/pipelines', { key, body: { name: 'X', new_group_name: 'Y' } }),
        api.rest('PUT', `/backend/pipelines/${p.id}`, { key, body: { name: 'X', stages: p.stages } }),
        api.rest('PUT', '/backend/pipelines/reorder', { key, body: { pipeline_id: p.id, group_id: p.group_id } }),
        api.rest('DELETE', `/backend/pipelines/${p.id}`, { key }),
        api.rest('POST', '/backend/pipeline/groups', { key, body: { name: 'X' } }),
        api.rest('PUT', `/backend/pipeline/groups/${p.group_id}`, { key, body: { name: 'X' } }),
        api.rest('DELETE', `/backend/pipeline/groups/${p.group_id}`, { key }),
        api.rest('POST', `/backend/pipelines/${p.id}/stages`, { key, body: { name: 'X' } }),
        api.rest('PUT', `/backend/pipeline/stages/${p.stages[0].id}`, { key, body: { name: 'X' } }),
        api.rest('DELETE', `/backend/pipeline/stages/${p.stages[0].id}`, { key }),
      ];
      for (const r of await Promise.all(writes)) {
        expect(r.status).toBe(403);
        expect(r.body).toEqual({ code: 'ERR_FORBIDDEN', message: expect.any(String) });
      }
    }
    for (const path of ['/backend/pipelines', `/backend/pipelines/${p.id}`, '/backend/pipeline/groups']) {
      const r = await api.rest('GET', path, { key: noView });
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('ERR_FORBIDDEN');
    }
    expect(await snapshot(api, org.tenantId)).toEqual(before);

    const gql = await api.gql(BoardConfig, {}, operator);
    expect(gql.data?.pipelineGroups).toHaveLength(1);
    const denied = await api.gql(CreatePipelineGql, { name: 'X', new_group_name: 'Y' }, operator);
    expect(denied.errors?.[0].extensions.code).toBe('FORBIDDEN');
  });

  it('ids of another organisation are 404 and change nothing', async () => {
    const a = await api.newOrg('A');
    const b = await api.newOrg('B');
    const pb = await makePipeline(api, b);
    const pa = await makePipeline(api, a);
    const beforeB = await snapshot(api, b.tenantId);
    const beforeA = await snapshot(api, a.tenantId);
    const key = a.key;
    const calls = [
      api.rest('GET', `/backend/pipelines/${pb.id}`, { key }),
      api.rest('PUT', `/backend/pipelines/${pb.id}`, { key, body: { name: 'X', stages: pb.stages } }),
      api.rest('DELETE', `/backend/pipelines/${pb.id}`, { key }),
      api.rest('PUT', '/backend/pipelines/reorder', { key, body: { pipeline_id: pb.id, group_id: pa.group_id } }),
      api.rest('PUT', '/backend/pipelines/reorder', { key, body: { pipeline_id: pa.id, group_id: pb.group_id } }),
      api.rest('PUT', '/backend/pipelines/reorder', {
        key,
        body: { pipeline_id: pa.id, group_id: pa.group_id, before_pipeline_id: pb.id },
      }),
      api.rest('POST', '/backend/pipelines', { key, body: { name: 'X', group_id: pb.group_id } }),
      api.rest('PUT', `/backend/pipeline/groups/${pb.group_id}`, { key, body: { name: 'X' } }),
      api.rest('DELETE', `/backend/pipeline/groups/${pb.group_id}`, { key }),
      api.rest('POST', `/backend/pipelines/${pb.id}/stages`, { key, body: { name: 'X' } }),
      api.rest('PUT', `/backend/pipeline/stages/${pb.stages[0].id}`, { key, body: { name: 'X' } }),
      api.rest('DELETE', `/backend/pipeline/stages/${pb.stages[0].id}`, { key }),
      api.rest('DELETE', `/backend/pipeline/stages/${pa.stages[0].id}?target_stage_id=${pb.stages[1].id}`, { key }),
      api.rest('PUT', `/backend/pipelines/${pa.id}`, { key, body: { name: 'X', stages: [...pa.stages, pb.stages[0]] } }),
    ];
    for (const r of await Promise.all(calls)) {
      expect(r.status, JSON.stringify(r.body)).toBe(404);
      expect(r.body.code).toBe('ERR_NOT_FOUND');
    }
    expect(await snapshot(api, b.tenantId)).toEqual(beforeB);
    expect(await snapshot(api, a.tenantId)).toEqual(beforeA);
    const listing = await api.rest('GET', '/backend/pipelines', { key });
    expect(listing.body.pipelines.map((p: any) => p.id)).toEqual([pa.id]);
  });
});

describe('GraphQL', () => {
  it('loads groups → pipelines → stages (and back to group/pipeline) in one request', async () => {
    const org = await api.newOrg();
    const created = await api.gql(CreatePipelineGql, { name: 'Vendas', new_group_name: 'Comercial' }, org.key);
    expect(created.errors).toBeUndefined();
    expect(created.data?.createPipeline.group.name).toBe('Comercial');
    const p1 = created.data!.createPipeline;
    await makePipeline(api, org, { name: 'Suporte', new_group_name: 'Atendimento' });
    await api.rest('GET', '/backend/pipelines', { key: org.key });

    let result: Awaited<ReturnType<typeof api.gql<any, any>>> | undefined;
    const statements = await api.countStatements(async () => {
      result = await api.gql(BoardConfig, {}, org.key);
    });
    expect(result!.errors).toBeUndefined();
    const groups = result!.data.pipelineGroups;
    expect(groups.map((g: any) => g.name)).toEqual(['Comercial', 'Atendimento']);
    expect(groups.map((g: any) => g.pipelines.totalCount)).toEqual([1, 1]);
    expect(groups[0].pipelines.nodes[0].id).toBe(p1.id);
    expect(groups[0].pipelines.nodes[0].group.id).toBe(groups[0].id);
    expect(groups[0].pipelines.nodes[0].stages.map((s: any) => [s.name, s.kind, s.position])).toEqual([
      ['Entrada', null, 0],
      ['Em andamento', null, 1],
      ['Ganho', 'won', 2],
      ['Perdido', 'lost', 3],
    ]);
    expect(groups[1].pipelines.nodes[0].stages[0].pipeline.id).toBe(groups[1].pipelines.nodes[0].id);
    expect(statements).toBeLessThanOrEqual(8);

    const listing = await api.gql(ListingGql, {}, org.key);
    expect(listing.data?.pipelines.groups).toHaveLength(2);
    expect(listing.data?.pipelines.pipelines.map((p) => p.stages.length)).toEqual([4, 4]);
  });
});
