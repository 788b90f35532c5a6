// The README quickstart works as written: every `curl` block of its "Quickstart" section runs, in order,
// then those of docs/api.md's "What an integration relies on", which go on from it, with bash and curl
// against the real server, the `# keep:` values of one answer feeding the next steps. The webhook
// examples deliver to a real receiver in this process (HOOK_URL, private URLs allowed).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docSection } from '../helpers/docs.js';
import { curlSteps, runSteps } from '../helpers/doc-steps.js';
import { startServer, type StartedServer } from '../helpers/server.js';

let server: StartedServer;
let hook: http.Server;
const hits: { id: string | undefined; type: string }[] = [];

beforeAll(async () => {
  hook = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      hits.push({ id: req.headers['webhook-id'] as string | undefined, type: JSON.parse(body).type });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((done) => hook.listen(0, '127.0.0.1', done));
  server = await startServer({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
}, 180_000);

afterAll(async () => {
  await server?.stop();
  hook?.closeAllConnections();
  await new Promise((done) => hook?.close(done));
});

describe('README quickstart', () => {
  it('runs every curl line of the quickstart against a started server', async () => {
    const steps = curlSteps([docSection('README.md', '## Quickstart'), docSection('docs/api.md', '## What an integration relies on')]);
    expect(steps.length).toBe(16);
    const vars: Record<string, string> = {
      BASE: server.url,
      KEY: server.key,
      HOOK_URL: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`,
    };
    const answers = await runSteps(steps, vars);
    const [lead, , deal, moved, board, graph, webhook, tested, redelivered, keyed, replayed, invalid, read, timed, eventTypes, synced] =
      answers as any[];
    expect(lead.data).toMatchObject({ name: 'Ana', company: 'Acme' });
    expect(deal).toMatchObject({ lead_id: vars.LEAD_ID, total: 1500, stage_id: vars.FIRST_STAGE_ID });
    expect(moved.stage_id).toBe(vars.NEXT_STAGE_ID);
    expect(board.stages.map((s: any) => [s.stage.name, s.deal_count, s.total])).toEqual([
      ['Entrada', 0, 0],
      ['Em andamento', 1, 1500],
      ['Ganho', 0, 0],
      ['Perdido', 0, 0],
    ]);
    expect(graph.errors).toBeUndefined();
    expect(graph.data.pipelineBoard).toMatchObject({ total_deals: board.total_deals, total_amount: board.total_amount });
    expect(graph.data.pipelineBoard.stages[1].stage.deals).toMatchObject({
      totalCount: 1,
      nodes: [{ total: 1500, lead: { name: 'Ana', company: 'Acme' } }],
    });
    // What an integration relies on: a replay, a 400 naming its field, time in stage, event types.
    expect(replayed).toEqual(keyed);
    expect(invalid.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'name' }] });
    expect(read.stage_entered_at).toEqual(expect.any(String));
    expect(board.stages[1].avg_days_in_stage).toEqual(expect.any(Number));
    expect(timed.stages.map((s: any) => s.avg_days_in_stage === null)).toEqual([true, false, true, true]);
    expect(eventTypes.data.map((t: any) => t.type)).toContain('deal.stage_changed');
    // Webhooks: the test event reached the receiver; the redelivery is a new delivery of the same message.
    expect(webhook.data).toMatchObject({ url: vars.HOOK_URL, secret: expect.stringMatching(/^whsec_/) });
    expect(tested.data).toMatchObject({ event_type: 'webhook.test', status: 'succeeded', response_status: 204 });
    expect(redelivered).toEqual({ success: true, delivery_id: expect.any(String) });
    expect(redelivered.delivery_id).not.toBe(vars.DELIVERY_ID);
    expect(hits[0]).toMatchObject({ type: 'webhook.test', id: expect.any(String) });
    // A sync's first page: leads by (updated_at, id), with the next cursor's place in the pagination.
    expect(synced.pagination).toHaveProperty('next_cursor');
    const times = synced.data.map((l: any) => l.updated_at);
    expect(times).toEqual([...times].sort());
  }, 120_000);
});
