// The README quickstart works as written: every `curl` block of its "Quickstart" section runs, in order,
// then those of docs/api.md's "What an integration relies on", which go on from it, with bash and curl
// against the real server, the `# keep:` values of one answer feeding the next steps. The webhook
// examples deliver to a real receiver in this process (HOOK_URL, private URLs allowed).
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docSection } from '../helpers/docs.js';
import { startServer, type StartedServer } from '../helpers/server.js';

interface Step {
  script: string;
  keep: Record<string, string>;
  /** `# status: 400`: the HTTP status the example shows (default: a 2xx). */
  status?: number;
}

/**
 * The ```sh blocks of these sections that call curl, in order, with their `# keep: NAME=.path` lines. The
 * subscription's `curl -N` keeps its stream open: test/deals/live.test.ts runs that one.
 */
function quickstartSteps(sections: string[]): Step[] {
  const blocks = sections
    .flatMap((section) => [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]))
    .filter((b) => /^curl /m.test(b) && !/^curl -N /m.test(b));
  return blocks.map((block) => {
    const keep: Record<string, string> = {};
    const status = /^# status: (\d{3})$/m.exec(block);
    for (const line of block.split('\n').filter((l) => l.startsWith('# keep:'))) {
      for (const pair of line.slice('# keep:'.length).trim().split(/\s+/)) {
        const [name, path] = pair.split('=');
        keep[name] = path;
      }
    }
    return {
      script: block
        .split('\n')
        .filter((l) => !l.startsWith('#'))
        .join('\n'),
      keep,
      status: status ? Number(status[1]) : undefined,
    };
  });
}

/** `.data.id`, `.stages[1].id` */
function pick(value: unknown, path: string): unknown {
  return path
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .filter(Boolean)
    .reduce<any>((v, key) => v?.[key], value);
}

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

/** bash with the step's script; asynchronous, so the receiver in this process can answer meanwhile. */
function bash(script: string, env: Record<string, string>): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', script], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ status: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('README quickstart', () => {
  it('runs every curl line of the quickstart against a started server', async () => {
    const steps = quickstartSteps([
      docSection('README.md', '## Quickstart'),
      docSection('docs/api.md', '## What an integration relies on'),
    ]);
    expect(steps.length).toBe(16);
    const vars: Record<string, string> = {
      BASE: server.url,
      KEY: server.key,
      HOOK_URL: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`,
    };
    const answers: unknown[] = [];
    for (const step of steps) {
      // Each curl also prints the HTTP status on a last line; -S shows curl's own errors.
      const script = `curl() { command curl -sS -w '\\n%{http_code}' "$@"; }\n${step.script}`;
      const run = await bash(script, vars);
      expect(run.status, `${step.script}\n${run.stderr}`).toBe(0);
      const lines = run.stdout.trimEnd().split('\n');
      const status = Number(lines.pop());
      const body = JSON.parse(lines.join('\n'));
      if (step.status) expect(status, `${step.script}\n${run.stdout}`).toBe(step.status);
      else {
        expect(status, `${step.script}\n${run.stdout}`).toBeGreaterThanOrEqual(200);
        expect(status, `${step.script}\n${run.stdout}`).toBeLessThan(300);
      }
      for (const [name, path] of Object.entries(step.keep)) {
        const value = pick(body, path);
        expect(typeof value, `${name}=${path} in ${run.stdout}`).toBe('string');
        vars[name] = value as string;
      }
      answers.push(body);
    }
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
