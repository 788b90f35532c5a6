// The events of lead and deal changes as a receiver gets them: each kind where its change happens, with
// `data` equal to the resource's REST read; events of a rolled-back transaction are never delivered;
// a hook inactive when an event was raised never gets it, even when the event is dispatched later.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscribableEventTypes } from '../../src/domains/webhooks/event-types.js';
import { TenantClients } from '../../src/db/tenant-scope.js';
import { insertLead } from '../../src/domains/leads/service.js';
import { startJobRunner } from '../../src/workers.js';
import type { JobRunner } from '../../src/jobs/runner.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { makeDeal, makePipeline, makeStatus, makeTag, nextPhone, type PipelineFixture } from '../helpers/factories.js';
import { makeWebhook, receiver, sleep, waitFor, type Hit, type Receiver } from './helpers.js';

const api = useTestApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '0,200,200' });
let runner: JobRunner | undefined;
const startRunner = async () => (runner ??= await startJobRunner(api.db, api.config));
const pauseRunner = async () => {
  await runner?.stop();
  runner = undefined;
};
afterAll(async () => {
  await runner?.stop({ timeoutMs: 2_000 });
});

describe('a hook inactive when the event was raised', () => {
  it('never gets it, even when the event is dispatched after the hook is activated', async () => {
    // No job runner yet: the dispatch jobs wait until the hook is active again.
    const org = await api.newOrg();
    const hook = await receiver(undefined, { keep: true });
    const webhook = await makeWebhook(api, org, { url: hook.url, events: ['lead.created'], active: false });
    await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'while inactive', phone: nextPhone() } });
    await api.rest('PUT', `/backend/webhooks/${webhook.id}`, { key: org.key, body: { active: true } });
    await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'after activation', phone: nextPhone() } });
    await startRunner();
    await waitFor(() => expect(hook.hits).toHaveLength(1));
    await sleep(500);
    expect(hook.hits.map((h) => h.json.data.name)).toEqual(['after activation']);
    await hook.close();
  });
});

describe('a dispatch job queued before the organisation rode along in its payload', () => {
  it('is fanned out by the event alone, to that organisation’s hook only', async () => {
    await pauseRunner();
    const [org, other] = [await api.newOrg(), await api.newOrg()];
    const hook = await receiver(undefined, { keep: true });
    const otherHook = await receiver(undefined, { keep: true });
    await makeWebhook(api, org, { url: hook.url, events: ['lead.created'] });
    await makeWebhook(api, other, { url: otherHook.url, events: ['lead.created'] });
    await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'legacy payload', phone: nextPhone() } });
    const dropped = await api.db.sql.query<{ id: string }>(
      `UPDATE jobs SET payload = payload - 'tenant_id'
       WHERE queue = 'events.dispatch' AND payload->>'tenant_id' = $1 RETURNING id::text AS id`,
      [org.tenantId],
    );
    expect(dropped).toHaveLength(1);
    await startRunner();
    await waitFor(() => expect(hook.hits).toHaveLength(1));
    await sleep(300);
    expect(hook.hits[0].json.data.name).toBe('legacy payload');
    expect(otherHook.hits).toHaveLength(0);
    await Promise.all([hook.close(), otherHook.close()]);
  });
});

/** A hook on every kind; `next(n)` waits for the next n deliveries and returns them sorted by type. */
function everything() {
  const state = {} as { org: Org; hook: Receiver; seen: number; p: PipelineFixture };
  beforeAll(async () => {
    await startRunner();
    state.org = await api.newOrg();
    state.hook = await receiver(undefined, { keep: true });
    state.seen = 0;
    await makeWebhook(api, state.org, { url: state.hook.url, events: subscribableEventTypes() });
    state.p = await makePipeline(api, state.org);
  });
  afterAll(() => state.hook.close());
  return {
    state,
    async next(n: number): Promise<Hit['json'][]> {
      await waitFor(() => expect(state.hook.hits.length).toBeGreaterThanOrEqual(state.seen + n));
      await sleep(300); // and nothing more
      const hits = state.hook.hits.slice(state.seen);
      state.seen = state.hook.hits.length;
      expect(
        hits.map((h) => h.json.type),
        'delivered more than expected',
      ).toHaveLength(n);
      return hits.map((h) => h.json).sort((a, b) => a.type.localeCompare(b.type));
    },
  };
}

describe('lead events', () => {
  const { state, next } = everything();
  const getLead = async (id: string) => (await api.rest('GET', `/backend/leads/${id}`, { key: state.org.key })).body.data;

  it('lead.created, lead.updated and lead.status_changed carry the lead as GET /backend/leads/{id} returns it', async () => {
    const { org } = state;
    const tag = await makeTag(api, org, 'VIP');
    const [novo, qualificado] = [await makeStatus(api, org, 'Novo'), await makeStatus(api, org, 'Qualificado')];
    const created = await api.rest('POST', '/backend/leads', {
      key: org.key,
      body: { name: 'Ana', phone: nextPhone(), status_id: novo.id, tag_ids: [tag.id], custom_fields: { plano: 'pro' } },
    });
    const id = created.body.data.id;
    const [c] = await next(1);
    expect(c).toEqual({ type: 'lead.created', timestamp: expect.any(String), data: await getLead(id) });
    expect(c.data).toMatchObject({ status: { id: novo.id }, tags: [{ id: tag.id, name: 'VIP' }], custom_fields: { plano: 'pro' } });

    await api.rest('PUT', `/backend/leads/${id}`, { key: org.key, body: { company: 'ACME' } });
    const [u] = await next(1);
    expect(u).toMatchObject({ type: 'lead.updated', data: await getLead(id) });

    await api.rest('PUT', `/backend/leads/${id}`, { key: org.key, body: { status_id: qualificado.id } });
    const [changed, updated] = await next(2);
    const lead = await getLead(id);
    expect(updated).toMatchObject({ type: 'lead.updated', data: lead });
    expect(changed).toMatchObject({
      type: 'lead.status_changed',
      data: { ...lead, from_status_id: novo.id, to_status_id: qualificado.id },
    });
  });
});

describe('deal events', () => {
  const { state, next } = everything();
  const getDeal = async (id: string) => (await api.rest('GET', `/backend/pipeline/deals/${id}`, { key: state.org.key })).body;
  const types = (events: Hit['json'][]) => events.map((e) => e.type);

  it('created, updated, stage_changed, won, lost and deleted, with the deal as GET /backend/pipeline/deals/{id} returns it', async () => {
    const { org, p } = state;
    const tag = await makeTag(api, org, 'Quente');
    const lead = (await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'Bia', phone: nextPhone() } })).body.data;
    await next(1); // lead.created
    const deal = await makeDeal(api, org, {
      pipeline_id: p.id,
      stage_id: p.entrada,
      lead_id: lead.id,
      value: 10,
      tag_ids: [tag.id],
      products: [{ name: 'Setup', price: 5, qty: 3 }],
    });
    const [created] = await next(1);
    expect(created).toEqual({ type: 'deal.created', timestamp: expect.any(String), data: await getDeal(deal.id) });
    expect(created.data).toMatchObject({
      total: 15,
      lead_name: 'Bia',
      products: [{ name: 'Setup', total: 15 }],
      tags: [{ name: 'Quente' }],
    });

    await api.rest('PUT', `/backend/pipeline/deals/${deal.id}`, { key: org.key, body: { note: 'ligar', value: 20 } });
    expect(await next(1)).toEqual([{ type: 'deal.updated', timestamp: expect.any(String), data: await getDeal(deal.id) }]);

    await api.rest('PUT', `/backend/pipeline/deals/${deal.id}/stage`, { key: org.key, body: { stage_id: p.andamento } });
    expect(await next(1)).toEqual([
      {
        type: 'deal.stage_changed',
        timestamp: expect.any(String),
        data: { ...(await getDeal(deal.id)), from_stage_id: p.entrada, to_stage_id: p.andamento },
      },
    ]);

    await api.rest('PUT', `/backend/pipeline/deals/${deal.id}/stage`, { key: org.key, body: { stage_id: p.ganho } });
    const won = await next(2);
    const afterWin = await getDeal(deal.id);
    expect(types(won)).toEqual(['deal.stage_changed', 'deal.won']);
    expect(won[0].data).toEqual({ ...afterWin, from_stage_id: p.andamento, to_stage_id: p.ganho });
    expect(won[1].data).toEqual(afterWin);
    expect(afterWin.won_at).toEqual(expect.any(String));

    await api.rest('PUT', `/backend/pipeline/deals/${deal.id}/stage`, {
      key: org.key,
      body: { stage_id: p.perdido, loss_reason: 'Preço' },
    });
    const lost = await next(2);
    expect(types(lost)).toEqual(['deal.lost', 'deal.stage_changed']);
    expect(lost[0].data).toEqual(await getDeal(deal.id));
    expect(lost[0].data.loss_reason).toBe('Preço');
    expect(lost[1].data).toMatchObject({ from_stage_id: p.ganho, to_stage_id: p.perdido });

    // Tags: a change is an update; adding a tag the deal has is no change.
    const other = await makeTag(api, org, 'Frio');
    await api.rest('POST', `/backend/pipeline/deals/${deal.id}/tags/${other.id}`, { key: org.key });
    await api.rest('POST', `/backend/pipeline/deals/${deal.id}/tags/${other.id}`, { key: org.key });
    const [tagged] = await next(1);
    expect(tagged).toMatchObject({ type: 'deal.updated', data: await getDeal(deal.id) });
    expect(tagged.data.tags.map((t: any) => t.name)).toEqual(['Frio', 'Quente']);

    // Refused changes send nothing.
    expect(
      (await api.rest('PUT', `/backend/pipeline/deals/${deal.id}/stage`, { key: org.key, body: { stage_id: p.perdido } })).status,
    ).toBe(400);

    expect((await api.rest('DELETE', `/backend/pipeline/deals/${deal.id}`, { key: org.key })).status).toBe(200);
    expect(await next(1)).toEqual([{ type: 'deal.deleted', timestamp: expect.any(String), data: { id: deal.id } }]);
  });

  it('a deal created with a new lead and a lead status sends the lead’s events too', async () => {
    const { org, p } = state;
    const status = await makeStatus(api, org, 'Cliente');
    const withNew = await makeDeal(api, org, {
      pipeline_id: p.id,
      stage_id: p.ganho,
      new_lead: { name: 'Caio', phone: nextPhone() },
      lead_status_id: status.id,
    });
    const events = await next(3);
    expect(types(events)).toEqual(['deal.created', 'deal.won', 'lead.created']);
    expect(events[2].data).toMatchObject({ id: withNew.lead_id, name: 'Caio', status: { id: status.id } });

    const existing = await makeDeal(api, org, {
      pipeline_id: p.id,
      stage_id: p.entrada,
      lead_id: withNew.lead_id,
      lead_status_id: (await makeStatus(api, org, 'Outro')).id,
    });
    const more = await next(3);
    expect(types(more)).toEqual(['deal.created', 'lead.status_changed', 'lead.updated']);
    expect(more[1].data).toMatchObject({ id: existing.lead_id, from_status_id: status.id, to_status_id: existing.lead_status_id });
  });

  it('reallocations send a move per deal, in constant statements; deleting a pipeline sends deal.deleted per deal', async () => {
    const { org } = state;
    const lead = (await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'Dani', phone: nextPhone() } })).body.data;
    await next(1);
    const q = await makePipeline(api, org, 'Realocação');
    const deals = [];
    for (let i = 0; i < 3; i++) deals.push(await makeDeal(api, org, { pipeline_id: q.id, stage_id: q.entrada, lead_id: lead.id }));
    await next(3);

    const r = await api.rest('DELETE', `/backend/pipeline/stages/${q.entrada}?target_stage_id=${q.andamento}`, { key: org.key });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const moves = await next(3);
    expect(types(moves)).toEqual(['deal.stage_changed', 'deal.stage_changed', 'deal.stage_changed']);
    for (const move of moves)
      expect(move.data).toEqual({ ...(await getDeal(move.data.id)), from_stage_id: q.entrada, to_stage_id: q.andamento });

    // Saving a pipeline without "Em andamento", its deals going to the won stage: a move and a win
    // each, in as many statements for three deals as for one.
    const saveToWon = async (pipeline: PipelineFixture, count: number) => {
      for (let i = 0; i < count; i++)
        await makeDeal(api, org, { pipeline_id: pipeline.id, stage_id: pipeline.andamento, lead_id: lead.id });
      await next(count);
      const stages = pipeline.stages.filter((s) => s.id !== pipeline.andamento).map((s) => ({ id: s.id, name: s.name }));
      const body = { name: pipeline.name, stages, reallocation_targets: { [pipeline.andamento]: pipeline.ganho } };
      // The runner pauses meanwhile: its handlers' statements would be counted too.
      await pauseRunner();
      const statements = await api.countStatements(async () =>
        expect((await api.rest('PUT', `/backend/pipelines/${pipeline.id}`, { key: org.key, body })).status).toBe(200),
      );
      await startRunner();
      const events = await next(2 * count);
      expect(types(events)).toEqual([...Array(count).fill('deal.stage_changed'), ...Array(count).fill('deal.won')]);
      expect(events.every((e) => e.data.stage_id === pipeline.ganho && e.data.won_at)).toBe(true);
      return statements;
    };
    expect(await saveToWon(await makePipeline(api, org, 'Três'), 3)).toBe(await saveToWon(await makePipeline(api, org, 'Um'), 1));

    expect((await api.rest('DELETE', `/backend/pipelines/${q.id}`, { key: org.key })).status).toBe(200);
    const deleted = await next(3);
    expect(deleted.map((e) => e.data).sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      deals.map((d) => ({ id: d.id })).sort((a, b) => a.id.localeCompare(b.id)),
    );
  });
});

describe('a rolled-back change', () => {
  it('delivers nothing: its events never existed', async () => {
    await startRunner();
    const org = await api.newOrg();
    const hook = await receiver();
    await makeWebhook(api, org, { url: hook.url, events: ['lead.created'] });
    const db = new TenantClients(api.db.prisma).for(org.tenantId);
    await expect(
      db.$transaction(async (tx) => {
        await insertLead(tx, { name: 'rolled back', phone: nextPhone() });
        throw new Error('the change failed after its event was emitted');
      }),
    ).rejects.toThrow('the change failed');
    await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'committed', phone: nextPhone() } });
    await waitFor(() => expect(hook.hits).toHaveLength(1));
    await sleep(500);
    expect(hook.hits.map((h) => h.json.data.name)).toEqual(['committed']);
    expect(await api.db.sql.query(`SELECT id FROM events WHERE data->>'name' = 'rolled back'`)).toEqual([]);
  });
});
