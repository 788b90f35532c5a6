// The README quickstart works as written: every `curl` block of its "Quickstart" section runs, in order,
// with bash and curl against the real server, the `# keep:` values of one answer feeding the next steps.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type StartedServer } from '../helpers/server.js';

interface Step {
  script: string;
  keep: Record<string, string>;
  /** `# status: 400`: the HTTP status the example shows (default: a 2xx). */
  status?: number;
}

/** The ```sh blocks of the Quickstart section that call curl, with their `# keep: NAME=.path` lines. */
function quickstartSteps(readme: string): Step[] {
  const start = readme.indexOf('\n## Quickstart\n');
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end);
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]).filter((b) => /^curl /m.test(b));
  return blocks.map((block) => {
    const keep: Record<string, string> = {};
    const status = /^# status: (\d{3})$/m.exec(block);
    for (const line of block.split('\n').filter((l) => l.startsWith('# keep:'))) {
      for (const pair of line.slice('# keep:'.length).trim().split(/\s+/)) {
        const [name, path] = pair.split('=');
        keep[name] = path;
      }
    }
    return { script: block.split('\n').filter((l) => !l.startsWith('#')).join('\n'), keep, status: status ? Number(status[1]) : undefined };
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

beforeAll(async () => {
  server = await startServer();
}, 180_000);

afterAll(async () => {
  await server?.stop();
});

describe('README quickstart', () => {
  it('runs every curl line of the quickstart against a started server', () => {
    const steps = quickstartSteps(fs.readFileSync('README.md', 'utf8'));
    expect(steps.length).toBe(12);
    const vars: Record<string, string> = { BASE: server.url, KEY: server.key };
    const answers: unknown[] = [];
    for (const step of steps) {
      // Each curl also prints the HTTP status on a last line; -S shows curl's own errors.
      const script = `curl() { command curl -sS -w '\\n%{http_code}' "$@"; }\n${step.script}`;
      const run = spawnSync('bash', ['-c', script], { env: { ...process.env, ...vars }, encoding: 'utf8', timeout: 30_000 });
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
    const [lead, , deal, moved, board, graph, keyed, replayed, invalid, read, eventTypes, synced] = answers as any[];
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
    expect(graph.data.pipelineBoard.stages[1].stage.deals).toMatchObject({ totalCount: 1, nodes: [{ total: 1500, lead: { name: 'Ana', company: 'Acme' } }] });
    // What an integration relies on: a replay, a 400 naming its field, time in stage, event types.
    expect(replayed).toEqual(keyed);
    expect(invalid.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'name' }] });
    expect(read.stage_entered_at).toEqual(expect.any(String));
    expect(board.stages[1].avg_days_in_stage).toEqual(expect.any(Number));
    expect(eventTypes.data.map((t: any) => t.type)).toContain('deal.stage_changed');
    // A sync's first page: leads by (updated_at, id), with the next cursor's place in the pagination.
    expect(synced.pagination).toHaveProperty('next_cursor');
    const times = synced.data.map((l: any) => l.updated_at);
    expect(times).toEqual([...times].sort());
  }, 120_000);
});
