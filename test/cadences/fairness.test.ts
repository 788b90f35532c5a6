// Cadence sends are claimed fairly: one organisation's thousand due step sends hold at most half of the
// job slots (sendsPerOrganisation), and another organisation's due send is sent beside them, claimed in
// its turn rather than behind the backlog.
import { describe, expect, it } from 'vitest';
import { cadenceSendQueue, sendsPerOrganisation } from '../../src/domains/cadences/scheduler.js';
import { runJobs, type JobRunner } from '../../src/jobs/runner.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { useFakeCloudApi } from '../messaging/fake-cloud-api.js';
import { makeChannel } from '../messaging/helpers.js';
import { makeAssociation, providerTemplate, syncTemplates } from '../templates/helpers.js';
import { afterAll, beforeAll } from 'vitest';

const api = useTestApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
const cloud = useFakeCloudApi(api, 'F');
const BACKLOG = 1_000;

let runner: JobRunner;
beforeAll(async () => {
  runner = await runJobs(api.db, { queues: [cadenceSendQueue({ db: api.db, config: api.config })], concurrency: 10, pollMs: 200 });
});
afterAll(async () => {
  await runner?.stop({ timeoutMs: 5_000 });
});

/** An organisation with a Cloud channel, a one-step cadence (paused) and `count` leads. */
async function setup(count: number, firstPhone: number) {
  const org = await api.newOrg();
  await makeChannel(api, org, {
    name: 'WhatsApp',
    provider: 'whatsapp_cloud',
    config: { api_url: cloud.url(), phone_number_id: '1068', access_token: 'token' },
  });
  const [template] = await syncTemplates(api, org, [providerTemplate('oferta', { text: 'Oferta da semana' })]);
  const cadence = await api.rest('POST', '/backend/cadences', {
    key: org.key,
    body: { name: 'Campanha', steps: [{ delay_seconds: 0 }], active: false },
  });
  expect(cadence.status).toBe(201);
  await makeAssociation(api, org, { cadence_id: cadence.body.id, template_id: template.id });
  // Many leads at once: a fixture, not what is measured.
  const leads = await api.db.sql.query<{ id: string }>(
    `INSERT INTO leads (tenant_id, name, phone) SELECT $1::uuid, 'Lead ' || n, '+' || ($2::bigint + n)::text FROM generate_series(1, $3::int) AS n RETURNING id::text AS id`,
    [org.tenantId, firstPhone, count],
  );
  for (let i = 0; i < leads.length; i += 1_000) {
    const r = await api.rest('POST', `/backend/cadences/${cadence.body.id}/enrolments`, {
      key: org.key,
      body: { lead_ids: leads.slice(i, i + 1_000).map((l) => l.id) },
    });
    expect(r.body.enrolled).toHaveLength(Math.min(1_000, leads.length - i));
  }
  return { org, cadenceId: cadence.body.id as string };
}

const stepsSent = async (org: Org) =>
  (await api.db.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM cadence_sends WHERE tenant_id = $1::uuid`, [org.tenantId]))[0].n;

describe('one organisation’s thousand due sends', () => {
  it('leave another organisation’s due send claimed in its turn, beside them, not behind them', { timeout: 120_000 }, async () => {
    expect(sendsPerOrganisation(api.config)).toBe(5);
    const a = await setup(BACKLOG, 5531944000000);
    const b = await setup(1, 5531945000000);
    await api.rest('PUT', `/backend/cadences/${a.cadenceId}`, { key: a.org.key, body: { active: true } });
    const deadline = Date.now() + 30_000;
    while ((await stepsSent(a.org)) < 20 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const due = Date.now();
    const before = await stepsSent(a.org);
    await api.rest('PUT', `/backend/cadences/${b.cadenceId}`, { key: b.org.key, body: { active: true } });
    while ((await stepsSent(b.org)) < 1 && Date.now() < due + 30_000) await new Promise((r) => setTimeout(r, 20));
    const meanwhile = (await stepsSent(a.org)) - before;
    console.log(
      `cadence fairness: B's send after ${Date.now() - due} ms, ${meanwhile} of A's sent meanwhile, ${BACKLOG - before - meanwhile} still due`,
    );
    expect(await stepsSent(b.org)).toBe(1);
    // Claimed in its turn: a few of A's sends beside it (a claim's worth), not the backlog in front of it.
    expect(meanwhile).toBeLessThan(50);
    expect(BACKLOG - before - meanwhile).toBeGreaterThan(500);
  });
});
