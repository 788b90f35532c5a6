// Time in stage (decisions.md "What integrations rely on"): `stage_entered_at` on create and on every
// stage change (not on a move to the deal's own stage), the migration's backfill from the history, and
// the board's `avg_days_in_stage` over each stage's open deals.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { makeDeal, makeOrgWithPipeline } from '../helpers/factories.js';

const api = useTestApp();

const setEntered = (dealId: string, daysAgo: number) =>
  api.db.prisma.$executeRaw`UPDATE deals SET stage_entered_at = now() - ${daysAgo} * interval '1 day' WHERE id = ${dealId}::uuid`;

describe('stage_entered_at', () => {
  it('is set on create and on each stage change; a move to the same stage keeps it', async () => {
    const { org, p, lead } = await makeOrgWithPipeline(api);
    const deal = await makeDeal(api, org, { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id });
    expect(Math.abs(Date.parse(deal.stage_entered_at) - Date.now())).toBeLessThan(60_000);
    await setEntered(deal.id, 3);
    const read = async () =>
      (await api.rest('GET', `/backend/pipeline/deals/${deal.id}`, { key: org.key })).body.stage_entered_at as string;
    const threeDaysAgo = await read();
    const same = await api.rest('PUT', `/backend/pipeline/deals/${deal.id}/stage`, { key: org.key, body: { stage_id: p.entrada } });
    expect(same.body.stage_entered_at).toBe(threeDaysAgo);
    const moved = await api.rest('PUT', `/backend/pipeline/deals/${deal.id}/stage`, { key: org.key, body: { stage_id: p.andamento } });
    expect(Date.parse(moved.body.stage_entered_at)).toBeGreaterThan(Date.parse(threeDaysAgo) + 2 * 86_400_000);
    const won = await api.rest('PUT', `/backend/pipeline/deals/${deal.id}/stage`, { key: org.key, body: { stage_id: p.ganho } });
    expect(won.body.stage_entered_at).toBe(won.body.won_at);
  });

  it('the migration backfills it from the history: the latest entry into the current stage, else creation', async () => {
    const { org, p, lead } = await makeOrgWithPipeline(api);
    const stayed = await makeDeal(api, org, { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id });
    const moved = await makeDeal(api, org, { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id });
    for (const stage_id of [p.andamento, p.entrada, p.andamento, p.andamento]) {
      expect((await api.rest('PUT', `/backend/pipeline/deals/${moved.id}/stage`, { key: org.key, body: { stage_id } })).status).toBe(200);
    }
    // Spread the history over days: the real entry into andamento (the third move) two days ago, the
    // same-stage move after it one day ago.
    const events = await api.db.prisma.dealEvent.findMany({
      where: { deal_id: moved.id, type: 'stage_changed' },
      orderBy: { created_at: 'asc' },
    });
    expect(events).toHaveLength(4);
    const daysAgo = [4, 3, 2, 1];
    for (const [i, e] of events.entries())
      await api.db.prisma
        .$executeRaw`UPDATE deal_events SET created_at = now() - ${daysAgo[i]} * interval '1 day' WHERE id = ${e.id}::uuid`;
    await api.db.prisma
      .$executeRaw`UPDATE deals SET stage_entered_at = now(), created_at = now() - interval '10 days' WHERE tenant_id = ${org.tenantId}::uuid`;

    const migration = fs.readFileSync(
      new URL('../../prisma/migrations/20261125133000_deal_stage_entered_at/migration.sql', import.meta.url),
      'utf8',
    );
    const backfill = migration.slice(migration.indexOf('UPDATE'));
    await api.db.prisma.$executeRawUnsafe(backfill);

    const rows = await api.db.prisma.deal.findMany({
      where: { tenant_id: org.tenantId },
      select: { id: true, stage_entered_at: true, created_at: true },
    });
    const entered = Object.fromEntries(rows.map((r) => [r.id, r]));
    expect(entered[stayed.id].stage_entered_at).toEqual(entered[stayed.id].created_at);
    const third = await api.db.prisma.dealEvent.findFirstOrThrow({ where: { id: events[2].id } });
    expect(entered[moved.id].stage_entered_at).toEqual(third.created_at);
  });
});

describe('avg_days_in_stage on the board', () => {
  it('averages the open deals of each stage, in REST and GraphQL; null without open deals', async () => {
    const { org, p, lead } = await makeOrgWithPipeline(api);
    const a = await makeDeal(api, org, { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id });
    const b = await makeDeal(api, org, { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id });
    const w = await makeDeal(api, org, { pipeline_id: p.id, stage_id: p.ganho, lead_id: lead.id });
    await setEntered(a.id, 2);
    await setEntered(b.id, 4);
    await setEntered(w.id, 30);

    const board = await api.rest('GET', `/backend/pipelines/${p.id}/board`, { key: org.key });
    expect(board.status).toBe(200);
    const byStage = Object.fromEntries(
      board.body.stages.map((s: { stage: { id: string }; avg_days_in_stage: number | null }) => [s.stage.id, s.avg_days_in_stage]),
    );
    expect(byStage[p.entrada]).toBeCloseTo(3, 1);
    expect(byStage[p.andamento]).toBeNull();
    // A won deal is not open: the won column has deals but no time in stage.
    expect(byStage[p.ganho]).toBeNull();

    const gql = await api.raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
      body: JSON.stringify({ query: `{ pipelineBoard(id: "${p.id}") { stages { deal_count avg_days_in_stage stage { id } } } }` }),
    });
    const stages = (await gql.json()).data.pipelineBoard.stages;
    expect(stages.find((s: { stage: { id: string } }) => s.stage.id === p.entrada)).toMatchObject({
      deal_count: 2,
      avg_days_in_stage: byStage[p.entrada],
    });

    // Computed in the board's one aggregate statement: a board with deals costs what an empty one costs.
    const empty = await makeOrgWithPipeline(api);
    const emptyCost = await api.countStatements(() => api.rest('GET', `/backend/pipelines/${empty.p.id}/board`, { key: empty.org.key }));
    const cost = await api.countStatements(() => api.rest('GET', `/backend/pipelines/${p.id}/board`, { key: org.key }));
    expect(cost).toBe(emptyCost);
  });
});
