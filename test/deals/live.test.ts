// dealChanged(pipeline_id) over server-sent events on a real socket: every kind of change arrives with
// the deal card as the REST read shows it (from the announcement, no statement per subscriber), in
// commit order; a rolled-back change is never announced; another organisation hears nothing and is
// refused the pipeline; a narrowed key without pipeline.view is refused.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticate } from '../../src/auth/authenticate.js';
import { createContext } from '../../src/context/context.js';
import { recordDealChange } from '../../src/domains/deals/history.js';
import type { RunningServer } from '../../src/http/server.js';
import { useTestApp } from '../helpers/app.js';
import { dealRequests, makeOrgWithPipeline, makeTag, type OrgWithPipeline } from '../helpers/factories.js';
import { listenOnSocket, subscribeSse, type SseStream } from '../helpers/sse.js';
import { DEAL_CHANGED, type DealChangeEvent } from './live-queries.js';

const api = useTestApp();

let server: RunningServer;
const streams: SseStream<unknown>[] = [];
beforeAll(async () => {
  server = await listenOnSocket(api);
});
afterAll(async () => {
  await Promise.all(streams.map((s) => s.close()));
  await server?.close();
});

async function subscribe(key: string, pipelineId: string) {
  const stream = await subscribeSse<DealChangeEvent>(server.url, key, DEAL_CHANGED, { pipeline_id: pipelineId });
  streams.push(stream);
  return stream;
}

/** A subscriber of the setup's pipeline, registered: a probe deal's edits reach it. */
async function liveSubscriber(setup: OrgWithPipeline, key = setup.org.key) {
  const { newDeal, put } = dealRequests(api, setup);
  const probe = await newDeal({ note: 'probe' });
  const stream = await subscribe(key, setup.p.id);
  expect(stream.status).toBe(200);
  let n = 0;
  await stream.ready(
    () => put(probe.id, { note: `probe ${++n}` }),
    (e) => e.deal_id === probe.id,
  );
  return stream;
}

const of = (stream: SseStream<DealChangeEvent>, dealId: string) => stream.received.filter((e) => e.deal_id === dealId);

describe('dealChanged', () => {
  it('streams created, updated, moved and deleted with the deal card as the REST read shows it', async () => {
    const setup = await makeOrgWithPipeline(api, { name: 'Ana', company: 'ACME' });
    const { org, p } = setup;
    const { newDeal, get, put, move } = dealRequests(api, setup);
    const stream = await liveSubscriber(setup);
    const tag = await makeTag(api, org, 'quente');

    const deal = await newDeal({ value: 120, products: [{ name: 'Consultoria', price: 60, qty: 2, custom: true }] });
    const created = await stream.until((e) => e.deal_id === deal.id, 'created');
    expect(created).toMatchObject({ kind: 'created', pipeline_id: p.id, from_stage_id: null, to_stage_id: p.entrada });
    expect(created.deal).toEqual(await get(deal.id));
    expect(created.deal).toMatchObject({
      lead_name: 'Ana',
      lead_company: 'ACME',
      total: 120,
      products: [{ name: 'Consultoria', price: 60, qty: 2, total: 120 }],
    });

    expect((await put(deal.id, { note: 'ligar amanhã' })).status).toBe(200);
    expect((await api.rest('POST', `/backend/pipeline/deals/${deal.id}/tags/${tag.id}`, { key: org.key })).status).toBe(200);
    expect((await move(deal.id, { stage_id: p.andamento })).status).toBe(200);
    const moved = await stream.until((e) => e.deal_id === deal.id && e.kind === 'moved', 'moved');
    expect(moved).toMatchObject({ from_stage_id: p.entrada, to_stage_id: p.andamento });
    expect(moved.deal).toEqual(await get(deal.id));
    expect(moved.deal).toMatchObject({ stage_id: p.andamento, note: 'ligar amanhã', tags: [{ name: 'quente' }] });

    expect((await move(deal.id, { stage_id: p.ganho })).status).toBe(200);
    expect((await api.rest('DELETE', `/backend/pipeline/deals/${deal.id}`, { key: org.key })).status).toBe(200);
    await stream.until((e) => e.deal_id === deal.id && e.kind === 'deleted', 'deleted');

    const events = of(stream, deal.id);
    expect(events.map((e) => e.kind)).toEqual(['created', 'updated', 'updated', 'moved', 'moved', 'deleted']);
    expect(events[1].deal).toMatchObject({ note: 'ligar amanhã', tags: [] });
    expect(events[2].deal!.tags).toMatchObject([{ id: tag.id, name: 'quente' }]);
    expect(events[4]).toMatchObject({ from_stage_id: p.andamento, to_stage_id: p.ganho, deal: { stage_id: p.ganho } });
    expect(events[4].deal!.won_at).toEqual(expect.any(String));
    expect(events[5]).toEqual({ kind: 'deleted', deal_id: deal.id, pipeline_id: p.id, from_stage_id: null, to_stage_id: null, deal: null });
    expect(stream.errors).toEqual([]);
  });

  it('serves every subscriber from the announcement: no statement per subscriber', async () => {
    const setup = await makeOrgWithPipeline(api);
    const { p } = setup;
    const { newDeal, move } = dealRequests(api, setup);
    const deal = await newDeal();
    const subscribers = [await liveSubscriber(setup)];
    const moveAndDeliver = async (to: string) =>
      api.countStatements(async () => {
        expect((await move(deal.id, { stage_id: to })).status).toBe(200);
        for (const s of subscribers) await s.until((e) => e.deal_id === deal.id && e.to_stage_id === to, `moved to ${to}`);
      });
    const one = await moveAndDeliver(p.andamento);
    for (let i = 0; i < 3; i++) subscribers.push(await liveSubscriber(setup));
    const four = await moveAndDeliver(p.entrada);
    expect(four).toBe(one);
  });

  it('announces the deals a stage deletion moves, one event each', async () => {
    const setup = await makeOrgWithPipeline(api);
    const { org, p } = setup;
    const { newDeal } = dealRequests(api, setup);
    const stream = await liveSubscriber(setup);
    const stage = await api.rest('POST', `/backend/pipelines/${p.id}/stages`, { key: org.key, body: { name: 'Proposta' } });
    expect(stage.status).toBe(201);
    const deals = [await newDeal({ stage_id: stage.body.id }), await newDeal({ stage_id: stage.body.id })];
    const removed = await api.rest('DELETE', `/backend/pipeline/stages/${stage.body.id}?target_stage_id=${p.andamento}`, { key: org.key });
    expect(removed.status, JSON.stringify(removed.body)).toBeLessThan(300);
    for (const d of deals) {
      const moved = await stream.until((e) => e.deal_id === d.id && e.kind === 'moved', `moved ${d.id}`);
      expect(moved).toMatchObject({ from_stage_id: stage.body.id, to_stage_id: p.andamento, deal: { stage_id: p.andamento } });
    }
  });

  it('never announces a change whose transaction rolled back', async () => {
    const setup = await makeOrgWithPipeline(api);
    const { org, p } = setup;
    const { newDeal, put } = dealRequests(api, setup);
    const stream = await liveSubscriber(setup);
    const deal = await newDeal();
    await stream.until((e) => e.deal_id === deal.id, 'created');

    const viewer = await authenticate(api.db.prisma, `Bearer ${org.key}`);
    const ctx = createContext(api.app.deps, { viewer, requestId: 'rollback' });
    const rolledBack = ctx.db.$transaction(async (tx) => {
      await tx.deal.update({ where: { id: deal.id }, data: { stage_id: p.andamento } });
      await recordDealChange(tx, ctx, deal.id, [{ type: 'stage_changed', from_stage_id: p.entrada, to_stage_id: p.andamento }]);
      throw new Error('rolled back on purpose');
    });
    await expect(rolledBack).rejects.toThrow('rolled back on purpose');

    // A committed change after it: once it has arrived, the rolled-back one would have arrived before it.
    expect((await put(deal.id, { note: 'depois' })).status).toBe(200);
    await stream.until((e) => e.deal_id === deal.id && e.kind === 'updated', 'updated');
    expect(of(stream, deal.id).map((e) => e.kind)).toEqual(['created', 'updated']);
    expect(of(stream, deal.id)[1].deal).toMatchObject({ stage_id: p.entrada, note: 'depois' });
  });

  it('keeps organisations apart: another one is refused the pipeline and hears none of its changes', async () => {
    const mine = await makeOrgWithPipeline(api);
    const theirs = await makeOrgWithPipeline(api);
    const refused = await subscribe(theirs.org.key, mine.p.id);
    expect(refused.status).toBe(200);
    while (!refused.completed) await new Promise((r) => setTimeout(r, 20));
    expect(refused.errors).toMatchObject([{ extensions: { code: 'NOT_FOUND' } }]);
    expect(refused.received).toEqual([]);

    const own = await liveSubscriber(theirs);
    const onMine = await liveSubscriber(mine);
    const mineDeal = await dealRequests(api, mine).newDeal();
    await onMine.until((e) => e.deal_id === mineDeal.id, 'created in mine');
    const theirDeal = await dealRequests(api, theirs).newDeal();
    await own.until((e) => e.deal_id === theirDeal.id, 'created in theirs');
    expect(own.received.filter((e) => e.pipeline_id !== theirs.p.id)).toEqual([]);
    expect(own.received.some((e) => e.deal_id === mineDeal.id)).toBe(false);
  });

  it('needs pipeline.view, like reading the board; an operator has it', async () => {
    const setup = await makeOrgWithPipeline(api);
    const narrowed = await subscribe(await api.keyFor(setup.org, 'owner', ['leads.view']), setup.p.id);
    while (!narrowed.completed) await new Promise((r) => setTimeout(r, 20));
    expect(narrowed.errors).toMatchObject([{ extensions: { code: 'FORBIDDEN' } }]);
    const operator = await liveSubscriber(setup, await api.keyFor(setup.org, 'operator'));
    expect(operator.errors).toEqual([]);
  });

  it('works as the README shows it, with curl', async () => {
    const setup = await makeOrgWithPipeline(api, { name: 'Ana' });
    const { org, p } = setup;
    const { newDeal, put, move } = dealRequests(api, setup);
    const readme = fs.readFileSync('README.md', 'utf8');
    const section = readme.slice(readme.indexOf('### Live data'));
    const script = /```sh\n([\s\S]*?)```/
      .exec(section)![1]
      .split('\n')
      .filter((l) => !l.startsWith('#'))
      .join('\n');
    expect(script).toMatch(/^curl -N /);
    const curl = spawn('bash', ['-c', script], {
      env: { ...process.env, BASE: server.url, KEY: org.key, PIPELINE_ID: p.id },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    curl.stdout.on('data', (d) => (out += d));
    curl.stderr.on('data', (d) => (out += d));
    try {
      const deal = await newDeal({ value: 1500 });
      const waitFor = async (pattern: RegExp, act?: () => Promise<unknown>) => {
        for (let i = 0; i < 200 && !pattern.test(out); i++) {
          if (act) await act();
          await new Promise((r) => setTimeout(r, act ? 250 : 20));
        }
        expect(out).toMatch(pattern);
      };
      let n = 0;
      await waitFor(/"kind":"updated"/, () => put(deal.id, { note: `probe ${++n}` }));
      expect((await move(deal.id, { stage_id: p.andamento })).status).toBe(200);
      await waitFor(/"kind":"moved"/);
      const line = out.split('\n').find((l) => l.includes('"kind":"moved"'))!;
      expect(JSON.parse(line.replace(/^data: ?/, '')).data.dealChanged).toMatchObject({
        deal_id: deal.id,
        from_stage_id: p.entrada,
        to_stage_id: p.andamento,
        deal: { stage_id: p.andamento, total: 1500, lead_name: 'Ana' },
      });
    } finally {
      process.kill(-curl.pid!, 'SIGTERM');
    }
  });
});
