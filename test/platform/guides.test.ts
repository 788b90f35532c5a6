// The guides of docs/api.md work as written: the curl blocks of "Who answers a conversation" and of
// "Cadences", run in order with bash and curl against a started server (test/helpers/doc-steps.ts), then
// what they promise checked: the operator's conversation routed to them, the lead enrolled.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docSection } from '../helpers/docs.js';
import { curlSteps, runSteps } from '../helpers/doc-steps.js';
import { startServer, type StartedServer } from '../helpers/server.js';

let server: StartedServer;
beforeAll(async () => {
  server = await startServer();
}, 180_000);
afterAll(async () => {
  await server?.stop();
});

const get = async (path: string, key: string) =>
  (await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${key}` } })).json() as Promise<any>;

describe('docs/api.md guides', () => {
  it('“Who answers a conversation”: the operator comes online and the new conversation is theirs', { timeout: 60_000 }, async () => {
    const vars: Record<string, string> = { BASE: server.url, KEY: server.key };
    const answers = await runSteps(curlSteps([docSection('docs/api.md', '## Who answers a conversation')]), vars);
    expect(answers).toHaveLength(9);
    expect(answers[2]).toMatchObject({ name: 'Vendas', routing: 'balanced' });
    expect(answers[6].data).toMatchObject({ availability: 'online', capacity: 5 });
    const conversationId = answers[7].data.conversation.id;
    // Routed by the job runner: the list the operator's client reads shows it once assigned.
    const deadline = Date.now() + 10_000;
    let mine: any;
    do {
      mine = await get('/backend/conversations?assignee_id=me&status=active', vars.OPERATOR_KEY);
      if (mine.data.length) break;
      await new Promise((r) => setTimeout(r, 100));
    } while (Date.now() < deadline);
    expect(mine.data.map((c: any) => [c.id, c.assignee_id])).toEqual([[conversationId, vars.OPERATOR_ID]]);
  });

  it('“Cadences”: a cadence from scratch, its templates associated and the lead enrolled', { timeout: 60_000 }, async () => {
    const vars: Record<string, string> = { BASE: server.url, KEY: server.key };
    const answers = await runSteps(curlSteps([docSection('docs/api.md', '## Cadences')]), vars);
    expect(answers).toHaveLength(9);
    expect(answers[4]).toMatchObject({ name: 'Follow-up', steps: [{ delay_seconds: 0 }, { delay_seconds: 86400 }], active: true });
    expect(answers[5]).toMatchObject({ step_index: 0, parameter_mapping: { '1': '{{LEAD_FIRSTNAME}}' } });
    expect(answers[7]).toMatchObject({ enrolled: [{ lead_id: vars.LEAD_ID, status: 'active', current_step: 0 }], skipped: [] });
    expect(answers[8].data).toEqual([expect.objectContaining({ id: vars.ENROLMENT_ID, next_send_at: expect.any(String) })]);
  });
});
