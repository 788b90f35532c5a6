// The transactional save PUT /backend/pipelines/{id}: order, creation, deletion, reallocation, kinds,
// all-or-nothing refusals, and concurrent saves keeping positions dense.
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { makeDeal, makePipeline } from '../helpers/factories.js';
import { graphql } from '../gql/index.js';
import { expectDense, pipelineSetup, snapshot, storedStages } from './helpers.js';

const api = useTestApp();

const SaveGql = graphql(`
  mutation SavePipelineGql($id: UUID!, $name: String!, $stages: [ConfigStage!]!, $reallocation_targets: JSONObject) {
    updatePipeline(id: $id, name: $name, stages: $stages, reallocation_targets: $reallocation_targets) {
      id
      name
      stages {
        id
        name
        position
        kind
      }
    }
  }
`);

const save = (key: string, id: string, body: Record<string, unknown>) => api.rest('PUT', `/backend/pipelines/${id}`, { key, body });

const setup = () => pipelineSetup(api);

describe('transactional save', () => {
  it('order defines positions; entries without id create stages; name, description and loss reasons are saved', async () => {
    const { org, p, entrada, andamento, ganho, perdido } = await setup();
    const r = await save(org.key, p.id, {
      name: 'Vendas B2B',
      description: 'Novo',
      loss_reasons: ['Preço', ' Prazo ', 'Preço'],
      stages: [
        { id: andamento.id, name: 'Negociação' },
        { name: 'Proposta', color: '200 50.5% 40%' },
        { id: entrada.id, name: 'Entrada', color: '10 20% 30%' },
        { id: ganho.id, name: 'Fechado' },
        { name: 'Contrato' },
        { id: perdido.id, name: 'Perdido' },
      ],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ id: p.id, name: 'Vendas B2B', description: 'Novo', loss_reasons: ['Preço', 'Prazo'] });
    expect(r.body.stages.map((s: any) => [s.name, s.position, s.kind, s.color])).toEqual([
      ['Negociação', 0, null, '215 16% 47%'],
      ['Proposta', 1, null, '200 50.5% 40%'],
      ['Entrada', 2, null, '10 20% 30%'],
      ['Fechado', 3, 'won', '215 16% 47%'],
      ['Contrato', 4, null, '215 16% 47%'],
      ['Perdido', 5, 'lost', '215 16% 47%'],
    ]);
    expect(r.body.stages[0].id).toBe(andamento.id);
    const stored = await storedStages(api, p.id);
    expect(stored.map((s) => s.name)).toEqual(['Negociação', 'Proposta', 'Entrada', 'Fechado', 'Contrato', 'Perdido']);
    expect(stored.every((s) => s.tenant_id === org.tenantId)).toBe(true);

    // Omitted description and loss_reasons are kept; stages sent back as read are accepted.
    const again = await save(org.key, p.id, { name: 'Vendas B2B', stages: r.body.stages });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ description: 'Novo', loss_reasons: ['Preço', 'Prazo'] });
    expect(again.body.stages).toEqual(r.body.stages);
  });

  it('won and lost stages keep their kind, whatever the entry says', async () => {
    const { org, p, entrada, andamento, ganho, perdido } = await setup();
    const r = await save(org.key, p.id, {
      name: 'V',
      stages: [
        { id: perdido.id, name: 'Perdido', kind: 'won' },
        { id: entrada.id, name: 'Entrada', kind: 'lost' },
        { id: andamento.id, name: 'Em andamento' },
        { id: ganho.id, name: 'Ganho', kind: null },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body.stages.map((s: any) => [s.id, s.kind])).toEqual([
      [perdido.id, 'lost'],
      [entrada.id, null],
      [andamento.id, null],
      [ganho.id, 'won'],
    ]);
  });

  it('missing stages are deleted; their deals move to the reallocation target that remains', async () => {
    const { org, p, entrada, andamento, ganho, perdido, lead } = await setup();
    const db = api.db.prisma;
    const d1 = await makeDeal(api, org, { pipeline_id: p.id, stage_id: entrada.id, lead_id: lead.id });
    const d2 = await makeDeal(api, org, { pipeline_id: p.id, stage_id: entrada.id, lead_id: lead.id });
    const r = await save(org.key, p.id, {
      name: 'V',
      stages: [
        { id: andamento.id, name: 'Em andamento' },
        { id: ganho.id, name: 'Ganho' },
        { id: perdido.id, name: 'Perdido' },
      ],
      reallocation_targets: { [entrada.id]: andamento.id },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.stages.map((s: any) => s.position)).toEqual([0, 1, 2]);
    expect(await db.stage.findFirst({ where: { id: entrada.id } })).toBeNull();
    const deals = await db.deal.findMany({ where: { id: { in: [d1.id, d2.id] } } });
    expect(deals.map((d) => d.stage_id)).toEqual([andamento.id, andamento.id]);

    // A removed stage without deals needs no target.
    const noDeals = await save(org.key, p.id, {
      name: 'V',
      stages: [{ id: ganho.id, name: 'Ganho' }, { id: andamento.id, name: 'A' }, { id: perdido.id, name: 'Perdido' }, { name: 'Nova' }],
    });
    expect(noDeals.status).toBe(200);
    const removeEmpty = await save(org.key, p.id, { name: 'V', stages: noDeals.body.stages.filter((s: any) => s.name !== 'Nova') });
    expect(removeEmpty.status).toBe(200);
    expect(removeEmpty.body.stages.map((s: any) => s.name)).toEqual(['Ganho', 'A', 'Perdido']);
  });

  it('reallocation into the won stage marks the deals won', async () => {
    const { org, p, entrada, andamento, ganho, perdido, lead } = await setup();
    const db = api.db.prisma;
    const d = await makeDeal(api, org, { pipeline_id: p.id, stage_id: andamento.id, lead_id: lead.id });
    const r = await save(org.key, p.id, {
      name: 'V',
      stages: [entrada, ganho, perdido].map((s) => ({ id: s.id, name: s.name })),
      reallocation_targets: { [andamento.id]: ganho.id },
    });
    expect(r.status).toBe(200);
    const moved = await db.deal.findFirstOrThrow({ where: { id: d.id } });
    expect(moved.stage_id).toBe(ganho.id);
    expect(moved.won_at).toBeInstanceOf(Date);
    expect(moved.lost_at).toBeNull();
  });

  it('refusals leave everything exactly as before', async () => {
    const { org, p, entrada, andamento, ganho, perdido, lead } = await setup();
    await makeDeal(api, org, { pipeline_id: p.id, stage_id: entrada.id, lead_id: lead.id });
    const other = await makePipeline(api, org, { name: 'Outro', new_group_name: 'Outro' });
    const rest = [andamento, ganho, perdido].map((s) => ({ id: s.id, name: `${s.name}!` }));
    const before = await snapshot(api, org.tenantId);

    const cases: [Record<string, unknown>, number, string][] = [
      // A removed stage with deals and no target: 409, nothing deleted, renamed or created.
      [{ name: 'Mudou', stages: [...rest, { name: 'Nova' }] }, 409, 'ERR_CONFLICT'],
      // Target is the removed stage itself, or a stage that does not remain.
      [{ name: 'Mudou', stages: rest, reallocation_targets: { [entrada.id]: entrada.id } }, 400, 'ERR_INVALID_INPUT'],
      [{ name: 'Mudou', stages: rest, reallocation_targets: { [entrada.id]: other.stages[0].id } }, 400, 'ERR_INVALID_INPUT'],
      // Into the lost stage: each lost deal needs its own reason.
      [{ name: 'Mudou', stages: rest, reallocation_targets: { [entrada.id]: perdido.id } }, 400, 'ERR_INVALID_INPUT'],
      [{ name: 'Mudou', stages: rest, reallocation_targets: { [entrada.id]: 'nope' } }, 400, 'ERR_INVALID_INPUT'],
      // Won and lost stages cannot be removed, nor created.
      [
        {
          name: 'Mudou',
          stages: [
            { id: entrada.id, name: 'E' },
            { id: andamento.id, name: 'A' },
            { id: ganho.id, name: 'G' },
          ],
        },
        400,
        'ERR_INVALID_INPUT',
      ],
      [
        {
          name: 'Mudou',
          stages: [
            ...[entrada, ...[andamento, ganho, perdido]].map((s) => ({ id: s.id, name: s.name })),
            { name: 'Outro ganho', kind: 'won' },
          ],
        },
        400,
        'ERR_INVALID_INPUT',
      ],
      // A stage of another pipeline, the same stage twice, bad color, empty names, empty list.
      [
        { name: 'Mudou', stages: [{ id: entrada.id, name: 'E' }, ...rest, { id: other.stages[0].id, name: 'X' }] },
        400,
        'ERR_INVALID_INPUT',
      ],
      [{ name: 'Mudou', stages: [{ id: entrada.id, name: 'E' }, { id: entrada.id, name: 'E' }, ...rest] }, 400, 'ERR_INVALID_INPUT'],
      [{ name: 'Mudou', stages: [{ id: entrada.id, name: 'E', color: '#ff0000' }, ...rest] }, 400, 'ERR_INVALID_INPUT'],
      [{ name: 'Mudou', stages: [{ id: entrada.id, name: 'E', color: '361 10% 10%' }, ...rest] }, 400, 'ERR_INVALID_INPUT'],
      [{ name: 'Mudou', stages: [{ id: entrada.id, name: ' ' }, ...rest] }, 400, 'ERR_INVALID_INPUT'],
      [{ name: ' ', stages: [{ id: entrada.id, name: 'E' }, ...rest] }, 400, 'ERR_INVALID_INPUT'],
      [{ name: 'Mudou', stages: [] }, 400, 'ERR_INVALID_INPUT'],
      [{ name: 'Mudou' }, 400, 'ERR_INVALID_INPUT'],
      [{ name: 'Mudou', stages: [{ id: entrada.id, name: 'E' }, ...rest], loss_reasons: ['ok', '  '] }, 400, 'ERR_INVALID_INPUT'],
      // An unknown stage id.
      [
        { name: 'Mudou', stages: [{ id: entrada.id, name: 'E' }, ...rest, { id: '00000000-0000-4000-8000-000000000000', name: 'X' }] },
        404,
        'ERR_NOT_FOUND',
      ],
    ];
    for (const [body, status, code] of cases) {
      const r = await save(org.key, p.id, body);
      expect(r.status, JSON.stringify({ body, answer: r.body })).toBe(status);
      expect(r.body.code).toBe(code);
      expect(await snapshot(api, org.tenantId)).toEqual(before);
    }
    const conflict = await save(org.key, p.id, { name: 'Mudou', stages: rest });
    expect(conflict.body).toEqual({ code: 'ERR_CONFLICT', message: expect.any(String), stage_ids: [entrada.id] });
  });

  it('the same rules over GraphQL', async () => {
    const { org, p, entrada, andamento, ganho, perdido, lead } = await setup();
    await makeDeal(api, org, { pipeline_id: p.id, stage_id: entrada.id, lead_id: lead.id });
    const stages = [andamento, ganho, perdido].map((s) => ({ id: s.id, name: s.name }));
    const refused = await api.gql(SaveGql, { id: p.id, name: 'G', stages }, org.key);
    expect(refused.errors?.[0].extensions).toMatchObject({ code: 'CONFLICT', status: 409 });
    const ok = await api.gql(
      SaveGql,
      { id: p.id, name: 'G', stages: [{ name: 'Nova' }, ...stages], reallocation_targets: { [entrada.id]: andamento.id } },
      org.key,
    );
    expect(ok.errors).toBeUndefined();
    expect(ok.data?.updatePipeline.stages.map((s) => [s.name, s.position])).toEqual([
      ['Nova', 0],
      ['Em andamento', 1],
      ['Ganho', 2],
      ['Perdido', 3],
    ]);
  });

  it('concurrent saves of the same pipeline never produce duplicate or gapped positions', async () => {
    const { org, p, entrada, andamento, ganho, perdido } = await setup();
    const base = [entrada, andamento, ganho, perdido];
    const shuffle = <T>(xs: T[], seed: number) =>
      xs
        .map((x, i) => ({ x, k: (i * 7919 + seed * 104729) % 97 }))
        .sort((a, b) => a.k - b.k)
        .map((e) => e.x);
    const saves = Array.from({ length: 10 }, (_, i) =>
      save(org.key, p.id, {
        name: `Save ${i}`,
        stages: shuffle(
          [
            ...base.map((s) => ({ id: s.id, name: `${s.name} ${i}` })),
            ...Array.from({ length: i % 3 }, (_, j) => ({ name: `Nova ${i}.${j}` })),
          ],
          i,
        ),
      }),
    );
    // Interleave stage additions and moves with the saves.
    const others = [
      api.rest('POST', `/backend/pipelines/${p.id}/stages`, { key: org.key, body: { name: 'Extra 1' } }),
      api.rest('PUT', `/backend/pipeline/stages/${ganho.id}`, { key: org.key, body: { position: 0 } }),
      api.rest('POST', `/backend/pipelines/${p.id}/stages`, { key: org.key, body: { name: 'Extra 2' } }),
    ];
    const results = await Promise.all([...saves, ...others]);
    for (const r of results) expect([200, 201], JSON.stringify(r.body)).toContain(r.status);
    const stored = await storedStages(api, p.id);
    expectDense(stored.map((s) => s.position));
    expect(stored.filter((s) => s.kind === 'won')).toHaveLength(1);
    expect(stored.filter((s) => s.kind === 'lost')).toHaveLength(1);
    const final = await api.rest('GET', `/backend/pipelines/${p.id}`, { key: org.key });
    expect(final.body.stages.map((s: any) => s.position)).toEqual(stored.map((_, i) => i));
  });

  it('the save is refused with 403 without pipeline.manage', async () => {
    const { org, p } = await setup();
    const key = await api.keyFor(org, 'operator');
    const before = await snapshot(api, org.tenantId);
    const r = await save(key, p.id, { name: 'X', stages: [] });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ code: 'ERR_FORBIDDEN', message: expect.any(String) });
    expect(await snapshot(api, org.tenantId)).toEqual(before);
  });
});
