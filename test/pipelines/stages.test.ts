// Stages: add at the end, update (name, color, position moves), delete with its four rules, and the
// database refusing a deletion that races with deals.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { testDatabaseKind } from '../helpers/database.js';
import { makeDeal, makePipeline } from '../helpers/factories.js';
import { insertDeal, nextDealNumber } from '../helpers/fixtures.js';
import { graphql } from '../gql/index.js';
import { constraintViolation } from '../../src/errors.js';
import { expectDense, pipelineSetup, snapshot, storedStages } from './helpers.js';

const api = useTestApp();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const DeleteStageGql = graphql(`
  mutation DeleteStageGql($id: UUID!, $target_stage_id: UUID) {
    deleteStage(id: $id, target_stage_id: $target_stage_id) {
      success
    }
  }
`);

const setup = () => pipelineSetup(api);

describe('add stage', () => {
  it('adds a regular stage at the end with the default or given color', async () => {
    const { org, p } = await setup();
    const r = await api.rest('POST', `/backend/pipelines/${p.id}/stages`, { key: org.key, body: { name: 'Proposta' } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ id: expect.any(String), pipeline_id: p.id, name: 'Proposta', color: '215 16% 47%', kind: null, position: 4 });
    const c = await api.rest('POST', `/backend/pipelines/${p.id}/stages`, {
      key: org.key,
      body: { name: 'Contrato', color: '142.1 76.2% 36.3%' },
    });
    expect(c.body).toMatchObject({ color: '142.1 76.2% 36.3%', position: 5, kind: null });
  });

  it('refuses won/lost kinds, bad colors, empty names and unknown pipelines, changing nothing', async () => {
    const { org, p } = await setup();
    const before = await snapshot(api, org.tenantId);
    for (const [body, status] of [
      [{ name: 'Outro ganho', kind: 'won' }, 400],
      [{ name: 'Outra perda', kind: 'lost' }, 400],
      [{ name: 'X', color: 'red' }, 400],
      [{ name: 'X', color: '215 16 47' }, 400],
      [{ name: 'X', color: '215 101% 47%' }, 400],
      [{ name: 'X', color: 'hsl(215 16% 47%)' }, 400],
      [{ name: '' }, 400],
      [{}, 400],
    ] as const) {
      const r = await api.rest('POST', `/backend/pipelines/${p.id}/stages`, { key: org.key, body });
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.body.code).toBe('ERR_INVALID_INPUT');
    }
    const missing = await api.rest('POST', '/backend/pipelines/00000000-0000-4000-8000-000000000000/stages', {
      key: org.key,
      body: { name: 'X' },
    });
    expect(missing.status).toBe(404);
    expect(await snapshot(api, org.tenantId)).toEqual(before);
  });
});

describe('update stage', () => {
  it('renames and recolors any stage; won/lost keep their kind', async () => {
    const { org, ganho, perdido } = await setup();
    const r = await api.rest('PUT', `/backend/pipeline/stages/${ganho.id}`, {
      key: org.key,
      body: { name: 'Fechado', color: '142 71% 45%', kind: 'lost' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: ganho.id, name: 'Fechado', color: '142 71% 45%', kind: 'won', position: 2 });
    const l = await api.rest('PUT', `/backend/pipeline/stages/${perdido.id}`, { key: org.key, body: { name: 'Descartado' } });
    expect(l.body).toMatchObject({ name: 'Descartado', kind: 'lost', color: '215 16% 47%' });
    const noop = await api.rest('PUT', `/backend/pipeline/stages/${perdido.id}`, { key: org.key, body: {} });
    expect(noop.body).toEqual(l.body);
  });

  it('moves a stage; the others shift and positions stay 0..n-1', async () => {
    const { org, p, entrada, andamento, ganho, perdido } = await setup();
    const names = async () => (await storedStages(api, p.id)).map((s) => `${s.name}:${s.position}`);
    let r = await api.rest('PUT', `/backend/pipeline/stages/${perdido.id}`, { key: org.key, body: { position: 0 } });
    expect(r.body.position).toBe(0);
    expect(await names()).toEqual(['Perdido:0', 'Entrada:1', 'Em andamento:2', 'Ganho:3']);
    r = await api.rest('PUT', `/backend/pipeline/stages/${perdido.id}`, { key: org.key, body: { position: 3 } });
    expect(r.status).toBe(200);
    expect(await names()).toEqual(['Entrada:0', 'Em andamento:1', 'Ganho:2', 'Perdido:3']);
    r = await api.rest('PUT', `/backend/pipeline/stages/${entrada.id}`, { key: org.key, body: { position: 2, name: 'Início' } });
    expect(r.body).toMatchObject({ name: 'Início', position: 2 });
    expect(await names()).toEqual(['Em andamento:0', 'Ganho:1', 'Início:2', 'Perdido:3']);
    r = await api.rest('PUT', `/backend/pipeline/stages/${ganho.id}`, { key: org.key, body: { position: 1 } });
    expect(r.status).toBe(200);
    expect(await names()).toEqual(['Em andamento:0', 'Ganho:1', 'Início:2', 'Perdido:3']);
    expect(andamento.id).toBeDefined();
  });

  it('refuses bad input and unknown stages, changing nothing', async () => {
    const { org, entrada } = await setup();
    const before = await snapshot(api, org.tenantId);
    for (const body of [
      { position: 4 },
      { position: -1 },
      { color: '1 2 3' },
      { name: '   ' },
      { position: 'x' },
      { name: 'Ok', position: 9 },
    ]) {
      const r = await api.rest('PUT', `/backend/pipeline/stages/${entrada.id}`, { key: org.key, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe('ERR_INVALID_INPUT');
    }
    const missing = await api.rest('PUT', '/backend/pipeline/stages/00000000-0000-4000-8000-000000000000', {
      key: org.key,
      body: { name: 'X' },
    });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('ERR_NOT_FOUND');
    expect(await snapshot(api, org.tenantId)).toEqual(before);
  });
});

describe('delete stage', () => {
  it('deletes an empty regular stage and closes the gap', async () => {
    const { org, p, entrada } = await setup();
    const r = await api.rest('DELETE', `/backend/pipeline/stages/${entrada.id}`, { key: org.key });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true });
    const stored = await storedStages(api, p.id);
    expect(stored.map((s) => [s.name, s.position])).toEqual([
      ['Em andamento', 0],
      ['Ganho', 1],
      ['Perdido', 2],
    ]);
    expect((await api.rest('DELETE', `/backend/pipeline/stages/${entrada.id}`, { key: org.key })).status).toBe(404);
  });

  it('rule 1: a stage with deals and no target is 409 and nothing changes; with a target its deals move', async () => {
    const { org, p, entrada, andamento, lead } = await setup();
    const db = api.db.prisma;
    // Raw deals, without history (the API writes a 'created' event for each), so that the events read
    // below are exactly what the deletion wrote.
    const d1 = await insertDeal(db, { tenantId: org.tenantId, pipelineId: p.id, stageId: entrada.id, leadId: lead.id, value: 10 });
    const d2 = await insertDeal(db, { tenantId: org.tenantId, pipelineId: p.id, stageId: entrada.id, leadId: lead.id, value: 20 });
    const before = await snapshot(api, org.tenantId);
    const r = await api.rest('DELETE', `/backend/pipeline/stages/${entrada.id}`, { key: org.key });
    expect(r.status).toBe(409);
    expect(r.body).toEqual({ code: 'ERR_CONFLICT', message: expect.any(String), deal_count: 2 });
    expect(await snapshot(api, org.tenantId)).toEqual(before);

    const ok = await api.rest('DELETE', `/backend/pipeline/stages/${entrada.id}?target_stage_id=${andamento.id}`, { key: org.key });
    expect(ok.status).toBe(200);
    const deals = await db.deal.findMany({ where: { id: { in: [d1.id, d2.id] } }, orderBy: { number: 'asc' } });
    expect(deals.map((d) => [d.stage_id, Number(d.total)])).toEqual([
      [andamento.id, 10],
      [andamento.id, 20],
    ]);
    const events = await db.dealEvent.findMany({ where: { deal_id: { in: [d1.id, d2.id] } } });
    expect(events.map((e) => [e.type, e.from_stage_id, e.to_stage_id, e.actor_id])).toEqual([
      ['stage_changed', entrada.id, andamento.id, org.userId],
      ['stage_changed', entrada.id, andamento.id, org.userId],
    ]);
    expectDense((await storedStages(api, p.id)).map((s) => s.position));
  });

  it('moving deals into the won stage marks them won; into the lost stage is refused', async () => {
    const { org, p, entrada, andamento, ganho, perdido, lead } = await setup();
    const db = api.db.prisma;
    const d = await makeDeal(api, org, { pipeline_id: p.id, stage_id: entrada.id, lead_id: lead.id });
    await makeDeal(api, org, { pipeline_id: p.id, stage_id: andamento.id, lead_id: lead.id });
    const before = await snapshot(api, org.tenantId);
    const lost = await api.rest('DELETE', `/backend/pipeline/stages/${andamento.id}?target_stage_id=${perdido.id}`, { key: org.key });
    expect(lost.status).toBe(400);
    expect(await snapshot(api, org.tenantId)).toEqual(before);
    const won = await api.rest('DELETE', `/backend/pipeline/stages/${entrada.id}?target_stage_id=${ganho.id}`, { key: org.key });
    expect(won.status).toBe(200);
    const moved = await db.deal.findFirstOrThrow({ where: { id: d.id } });
    expect(moved.stage_id).toBe(ganho.id);
    expect(moved.won_at).toBeInstanceOf(Date);
  });

  it('rule 2: a target in another pipeline or equal to the stage is 400; rule 3: won/lost cannot be deleted; nothing changes', async () => {
    const { org, p, entrada, andamento, ganho, perdido, lead } = await setup();
    await makeDeal(api, org, { pipeline_id: p.id, stage_id: entrada.id, lead_id: lead.id });
    const other = await makePipeline(api, org, { name: 'Outro', new_group_name: 'Outro' });
    const before = await snapshot(api, org.tenantId);
    const cases: [string, number, string][] = [
      [`${entrada.id}?target_stage_id=${other.stages[0].id}`, 400, 'ERR_INVALID_INPUT'],
      [`${entrada.id}?target_stage_id=${entrada.id}`, 400, 'ERR_INVALID_INPUT'],
      [`${andamento.id}?target_stage_id=${andamento.id}`, 400, 'ERR_INVALID_INPUT'],
      [`${ganho.id}`, 400, 'ERR_INVALID_INPUT'],
      [`${perdido.id}?target_stage_id=${entrada.id}`, 400, 'ERR_INVALID_INPUT'],
      [`${entrada.id}?target_stage_id=not-a-uuid`, 400, 'ERR_INVALID_INPUT'],
      [`${entrada.id}?target_stage_id=00000000-0000-4000-8000-000000000000`, 404, 'ERR_NOT_FOUND'],
    ];
    for (const [path, status, code] of cases) {
      const r = await api.rest('DELETE', `/backend/pipeline/stages/${path}`, { key: org.key });
      expect(r.status, path).toBe(status);
      expect(r.body.code).toBe(code);
      expect(await snapshot(api, org.tenantId)).toEqual(before);
    }
    const gql = await api.gql(DeleteStageGql, { id: ganho.id }, org.key);
    expect(gql.errors?.[0].extensions).toMatchObject({ code: 'INVALID_INPUT', status: 400 });
  });

  it('rule 4: a pipeline keeps at least one stage', async () => {
    const { org, p, entrada } = await setup();
    // A pipeline reduced to a single regular stage (raw), e.g. data from before won/lost stages existed.
    await api.db.prisma.stage.deleteMany({ where: { pipeline_id: p.id, id: { not: entrada.id } } });
    await api.db.prisma.stage.update({ where: { tenant_id_id: { tenant_id: org.tenantId, id: entrada.id } }, data: { position: 0 } });
    const before = await snapshot(api, org.tenantId);
    const r = await api.rest('DELETE', `/backend/pipeline/stages/${entrada.id}`, { key: org.key });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('ERR_INVALID_INPUT');
    expect(await snapshot(api, org.tenantId)).toEqual(before);
  });

  it('the database itself refuses to delete a stage that has deals', async () => {
    const { org, p, entrada, lead } = await setup();
    await makeDeal(api, org, { pipeline_id: p.id, stage_id: entrada.id, lead_id: lead.id });
    const error = await api.db.prisma.stage
      .delete({ where: { tenant_id_id: { tenant_id: org.tenantId, id: entrada.id } } })
      .catch((e) => e);
    expect(constraintViolation(error), String(error)).toBe('foreign_key');
    expect(await api.db.prisma.stage.count({ where: { id: entrada.id } })).toBe(1);
  });

  it('stage deletion racing with deal creation never leaves a deal on a deleted stage', async () => {
    const { org, p, andamento, lead } = await setup();
    const db = api.db.prisma;
    let number = await nextDealNumber(db, org.tenantId);
    for (let round = 0; round < 8; round++) {
      const stage = await api.rest('POST', `/backend/pipelines/${p.id}/stages`, { key: org.key, body: { name: `Corrida ${round}` } });
      const target = round % 2 ? `?target_stage_id=${andamento.id}` : '';
      // Raw inserts, not the API: the point is that the database itself (the composite foreign key)
      // refuses a deal on a stage being deleted, which the API's own checks would hide.
      // Staggered so that some inserts land before the deletion, some during and some after it.
      const inserts = [0, 5, 15, 30, 60].map((delay) =>
        sleep(delay + round)
          .then(() =>
            insertDeal(db, { tenantId: org.tenantId, pipelineId: p.id, stageId: stage.body.id, leadId: lead.id, number: number++ }),
          )
          .then(
            () => 'inserted' as const,
            (e) => {
              expect(constraintViolation(e), String(e)).toBe('foreign_key');
              return 'refused' as const;
            },
          ),
      );
      const deletion = api.rest('DELETE', `/backend/pipeline/stages/${stage.body.id}${target}`, { key: org.key });
      const [del, ...outcomes] = await Promise.all([deletion, ...inserts]);
      expect([200, 409], JSON.stringify(del.body)).toContain(del.status);
      const stageLeft = await db.stage.count({ where: { id: stage.body.id } });
      if (del.status === 200) expect(stageLeft).toBe(0);
      else {
        expect(del.body.code).toBe('ERR_CONFLICT');
        expect(stageLeft).toBe(1);
      }
      expect(outcomes.every((o) => o === 'inserted' || o === 'refused')).toBe(true);
      if (process.env.DEBUG_RACE) console.log(del.status, outcomes.join(','));
    }
    // No deal points to a stage that does not exist (the composite FK is NO ACTION).
    const orphans = await db.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM deals d LEFT JOIN stages s ON s.tenant_id = d.tenant_id AND s.pipeline_id = d.pipeline_id AND s.id = d.stage_id WHERE s.id IS NULL`,
    );
    expect(orphans[0].n).toBe(0);
    expectDense((await storedStages(api, p.id)).map((s) => s.position));
  });

  it.skipIf(testDatabaseKind() !== 'postgres')(
    'a deal moved into the stage while it is being deleted makes the deletion 409, not 500',
    async () => {
      const { org, p, entrada, andamento, ganho, lead } = await setup();
      const db = api.db.prisma;
      const deal = await makeDeal(api, org, { pipeline_id: p.id, stage_id: ganho.id, lead_id: lead.id });
      const url = new URL((api.db as unknown as { url: string }).url);
      const schema = url.searchParams.get('schema')!;
      url.searchParams.delete('schema');
      const client = new pg.Client({ connectionString: url.toString(), options: `-c search_path="${schema}"` });
      await client.connect();
      try {
        // Another transaction moves a deal into the stage and holds its lock, uncommitted.
        await client.query('BEGIN');
        await client.query('UPDATE deals SET stage_id = $1 WHERE id = $2', [entrada.id, deal.id]);
        const deletion = api.rest('DELETE', `/backend/pipeline/stages/${entrada.id}?target_stage_id=${andamento.id}`, { key: org.key });
        await new Promise((resolve) => setTimeout(resolve, 500));
        await client.query('COMMIT');
        const r = await deletion;
        expect(r.status).toBe(409);
        expect(r.body.code).toBe('ERR_CONFLICT');
      } finally {
        await client.end();
      }
      expect(await db.stage.count({ where: { id: entrada.id } })).toBe(1);
      expect((await db.deal.findFirstOrThrow({ where: { id: deal.id } })).stage_id).toBe(entrada.id);
      expectDense((await storedStages(api, p.id)).map((s) => s.position));
    },
  );
});
