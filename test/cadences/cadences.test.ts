// Cadences that run, over REST and GraphQL: the record (steps, reply rule, send window, pause),
// enrolments with per-lead results, and the scheduler sending each step's templates in order to a fake
// WhatsApp Cloud API on loopback, once, then stopping on a reply, a won deal, a pause or a template
// no longer approved.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cadenceSendQueue } from '../../src/domains/cadences/scheduler.js';
import { runJobs } from '../../src/jobs/runner.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { makeDeal, makePipeline } from '../helpers/factories.js';
import { useFakeCloudApi } from '../messaging/fake-cloud-api.js';
import { inbound, makeChannel } from '../messaging/helpers.js';
import { makeAssociation, providerTemplate, syncTemplates } from '../templates/helpers.js';
import { afterAll, beforeAll } from 'vitest';
import type { JobRunner } from '../../src/jobs/runner.js';
import { graphql } from '../gql/index.js';

const UpdateAndEnrolGql = graphql(`
  mutation CadencesUpdateAndEnrol($id: UUID!, $lead: UUID!) {
    updateCadence(id: $id, send_window: { timezone: "UTC", days: [1, 2, 3, 4, 5, 6, 7], from: "00:00", to: "23:59" }) {
      name
      active
      send_window {
        timezone
        days
        from
        to
      }
      steps {
        delay_seconds
      }
    }
    enrolLeads(id: $id, lead_ids: [$lead]) {
      enrolled {
        status
        current_step
        lead {
          id
        }
        cadence {
          name
        }
      }
      skipped {
        lead_id
        reason
      }
    }
  }
`);

const LeadEnrolmentsGql = graphql(`
  query CadencesOnLead($id: UUID!) {
    lead(id: $id) {
      cadence_enrolments {
        totalCount
        nodes {
          status
          cadence_id
        }
      }
    }
  }
`);

const api = useTestApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
const cloud = useFakeCloudApi(api, 'C');

let runner: JobRunner;
beforeAll(async () => {
  runner = await runJobs(api.db, { queues: [cadenceSendQueue({ db: api.db, config: api.config })], pollMs: 100 });
});
afterAll(async () => {
  await runner?.stop({ timeoutMs: 2_000 });
});

let mobiles = 5531966600000;

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const rest = (org: Org | string, method: string, path: string, body?: unknown) =>
  api.rest(method, `/backend${path}`, { key: typeof org === 'string' ? org : org.key, body });

async function newLead(org: Org) {
  const r = await rest(org, 'POST', '/leads', { name: 'Ana Souza', company: 'Acme', phone: `+${mobiles++}` });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data as { id: string; phone: string };
}

/** An organisation with a Cloud channel and a cadence of two steps: two templates, then one after `delay` s. */
async function setup(cadence: Record<string, unknown> = {}, delay = 2) {
  const org = await api.newOrg();
  const channel = await makeChannel(api, org, {
    name: 'WhatsApp',
    provider: 'whatsapp_cloud',
    config: { api_url: cloud.url(), phone_number_id: '1066', access_token: 'token' },
  });
  const [boas, proposta, lembrete] = await syncTemplates(api, org, [
    providerTemplate('boas_vindas', { text: 'Olá {{1}}!' }),
    providerTemplate('proposta', { text: 'Sua proposta da {{1}} está pronta.' }),
    providerTemplate('lembrete', { text: 'Ainda tem interesse?' }),
  ]);
  const created = await rest(org, 'POST', '/cadences', {
    name: 'Follow-up',
    steps: [{ delay_seconds: 0 }, { delay_seconds: delay }],
    ...cadence,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const id = created.body.id as string;
  await makeAssociation(api, org, {
    cadence_id: id,
    template_id: proposta.id,
    step_index: 0,
    message_index: 1,
    parameter_mapping: { '1': '{{COMPANY_NAME}}' },
  });
  await makeAssociation(api, org, {
    cadence_id: id,
    template_id: boas.id,
    step_index: 0,
    message_index: 0,
    parameter_mapping: { '1': '{{LEAD_FIRSTNAME}}' },
  });
  await makeAssociation(api, org, { cadence_id: id, template_id: lembrete.id, step_index: 1, message_index: 0 });
  return { org, channel, cadence: created.body as { id: string }, templates: { boas, proposta, lembrete } };
}

async function enrol(org: Org, cadenceId: string, leadIds: string[], extra: Record<string, unknown> = {}) {
  const r = await rest(org, 'POST', `/cadences/${cadenceId}/enrolments`, { lead_ids: leadIds, ...extra });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as { enrolled: any[]; skipped: { lead_id: string; reason: string }[] };
}

async function enrolment(org: Org, cadenceId: string, leadId: string) {
  const r = await rest(org, 'GET', `/cadences/${cadenceId}/enrolments?limit=100`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body.data as any[]).filter((e) => e.lead_id === leadId).at(-1);
}

async function eventsOf(org: Org, prefix = 'cadence.') {
  const rows = await api.db.sql.query<{ type: string; data: any }>(
    // Events of one transaction share its time: within it, in the order a stream of an enrolment has them.
    `SELECT type, data FROM events WHERE tenant_id = $1::uuid AND type LIKE $2
     ORDER BY created_at, array_position(ARRAY['cadence.enrolled', 'cadence.step_sent', 'cadence.completed', 'cadence.stopped'], type), id`,
    [org.tenantId, `${prefix}%`],
  );
  return rows;
}

/** The template names the fake Cloud API received for a phone, in order. */
const sentTo = (phone: string) => cloud.sent.filter((b) => b.to === phone.slice(1)).map((b) => b.template?.name);

/** Waits until no step job of the organisation is waiting or running. */
async function drained(org: Org) {
  await until(
    'the cadence jobs',
    async () =>
      (
        await api.db.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE queue = 'cadences.send' AND group_key = $1`, [
          org.tenantId,
        ])
      )[0].n,
    (n) => n === 0,
  );
}

describe('the cadence record', () => {
  it('is created, read, changed field by field and deleted over REST, with every bad value refused by name', async () => {
    const org = await api.newOrg();
    const window = { timezone: 'america/sao_paulo', days: [5, 1, 3], from: '09:00', to: '18:00' };
    const created = await rest(org, 'POST', '/cadences', {
      name: ' Reengajar ',
      steps: [{ delay_seconds: 0 }, { delay_seconds: 86_400 }],
      send_window: window,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: 'Reengajar',
      steps: [{ delay_seconds: 0 }, { delay_seconds: 86_400 }],
      stop_on_reply: true,
      send_window: { timezone: 'America/Sao_Paulo', days: [1, 3, 5], from: '09:00', to: '18:00' },
      active: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const id = created.body.id;
    const renamed = await rest(org, 'PUT', `/cadences/${id}`, { name: 'Reengajar leads', stop_on_reply: false });
    expect(renamed.body).toMatchObject({
      name: 'Reengajar leads',
      stop_on_reply: false,
      steps: created.body.steps,
      send_window: created.body.send_window,
    });
    const anyTime = await rest(org, 'PUT', `/cadences/${id}`, { send_window: null, steps: [] });
    expect(anyTime.body).toMatchObject({ send_window: null, steps: [] });
    expect((await rest(org, 'GET', `/cadences/${id}`)).body).toEqual(anyTime.body);

    const refused = async (body: Record<string, unknown>, field: string) => {
      const r = await rest(org, 'POST', '/cadences', { name: 'x', ...body });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.code).toBe('ERR_INVALID_INPUT');
      expect(r.body.message).toContain(field);
    };
    await refused({ steps: [{ delay_seconds: 0 }, { delay_seconds: -1 }] }, 'steps[1].delay_seconds');
    await refused({ steps: [{ delay_seconds: 90 * 86_400 + 1 }] }, 'steps[0].delay_seconds');
    await refused({ steps: Array.from({ length: 51 }, () => ({ delay_seconds: 1 })) }, 'steps');
    await refused({ send_window: { ...window, timezone: 'Mars/Olympus' } }, 'send_window.timezone');
    await refused({ send_window: { ...window, days: [0] } }, 'send_window.days');
    await refused({ send_window: { ...window, days: [] } }, 'send_window.days');
    await refused({ send_window: { ...window, from: '18:00', to: '09:00' } }, 'send_window.to');
    await refused({ send_window: { ...window, from: '9:00' } }, 'send_window.from');
    await refused({ name: '' }, 'name');

    // Another organisation's cadence is unknown; an operator reads but does not write.
    const other = await api.newOrg();
    expect((await rest(other, 'GET', `/cadences/${id}`)).status).toBe(404);
    expect((await rest(other, 'PUT', `/cadences/${id}`, { name: 'x' })).status).toBe(404);
    expect((await rest(other, 'DELETE', `/cadences/${id}`)).status).toBe(404);
    const operator = await api.keyFor(org, 'operator');
    expect((await rest(operator, 'GET', `/cadences/${id}`)).status).toBe(200);
    expect((await rest(operator, 'PUT', `/cadences/${id}`, { name: 'x' })).status).toBe(403);
    expect((await rest(await api.keyFor(org, 'admin', ['templates.manage']), 'POST', '/cadences', { name: 'x' })).status).toBe(403);
    expect((await rest(await api.keyFor(org, 'admin', ['cadences.manage']), 'POST', '/cadences', { name: 'x' })).status).toBe(201);

    expect((await rest(org, 'DELETE', `/cadences/${id}`)).status).toBe(204);
    expect((await rest(org, 'GET', `/cadences/${id}`)).status).toBe(404);
  });

  it('is the same over GraphQL, with its enrolments on the lead', async () => {
    const { org, cadence } = await setup({ active: false });
    const lead = await newLead(org);
    const r = await api.gql(UpdateAndEnrolGql, { id: cadence.id, lead: lead.id }, org.key);
    expect(r.errors).toBeUndefined();
    expect(r.data!.updateCadence).toEqual({
      name: 'Follow-up',
      active: false,
      send_window: { timezone: 'UTC', days: [1, 2, 3, 4, 5, 6, 7], from: '00:00', to: '23:59' },
      steps: [{ delay_seconds: 0 }, { delay_seconds: 2 }],
    });
    expect(r.data!.enrolLeads).toEqual({
      enrolled: [{ status: 'active', current_step: 0, lead: { id: lead.id }, cadence: { name: 'Follow-up' } }],
      skipped: [],
    });
    const onLead = await api.gql(LeadEnrolmentsGql, { id: lead.id }, org.key);
    expect(onLead.data!.lead!.cadence_enrolments).toEqual({ totalCount: 1, nodes: [{ status: 'active', cadence_id: cadence.id }] });
  });
});

describe('enrolments', () => {
  it('answer one result per lead: enrolled, already_enrolled, not_found, no_recipient', async () => {
    const { org, cadence } = await setup({ active: false });
    const [a, b] = [await newLead(org), await newLead(org)];
    const other = await api.newOrg();
    const foreign = await newLead(other);
    const rows = await api.db.sql.query<{ id: string }>(
      `INSERT INTO leads (tenant_id, name) VALUES ($1::uuid, 'Sem contato') RETURNING id::text AS id`,
      [org.tenantId],
    );
    const unreachable = rows[0].id;
    const first = await enrol(org, cadence.id, [a.id, a.id, foreign.id, unreachable]);
    expect(first.enrolled).toEqual([
      {
        id: expect.any(String),
        cadence_id: cadence.id,
        lead_id: a.id,
        status: 'active',
        current_step: 0,
        next_send_at: expect.any(String),
        stop_reason: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    ]);
    expect(first.skipped).toEqual([
      { lead_id: foreign.id, reason: 'not_found' },
      { lead_id: unreachable, reason: 'no_recipient' },
    ]);
    const second = await enrol(org, cadence.id, [a.id, b.id]);
    expect(second.enrolled.map((e) => e.lead_id)).toEqual([b.id]);
    expect(second.skipped).toEqual([{ lead_id: a.id, reason: 'already_enrolled' }]);

    const tooMany = await rest(org, 'POST', `/cadences/${cadence.id}/enrolments`, {
      lead_ids: Array.from({ length: 1_001 }, () => randomUUID()),
    });
    expect(tooMany.status).toBe(400);
    expect((await rest(other, 'POST', `/cadences/${cadence.id}/enrolments`, { lead_ids: [foreign.id] })).status).toBe(404);

    const page = await rest(org, 'GET', `/cadences/${cadence.id}/enrolments?status=active&limit=1`);
    expect(page.body.pagination).toEqual({ total: 2, limit: 1, offset: 0, has_more: true });
    expect(page.body.data.map((e: any) => e.lead_id)).toEqual([a.id]);

    expect((await rest(org, 'DELETE', `/cadences/${cadence.id}/enrolments/${a.id}`)).status).toBe(204);
    expect((await rest(org, 'DELETE', `/cadences/${cadence.id}/enrolments/${a.id}`)).status).toBe(404);
    expect(await enrolment(org, cadence.id, a.id)).toMatchObject({ status: 'stopped', stop_reason: 'unenrolled', next_send_at: null });
    // Stopped, the lead may be enrolled again.
    expect((await enrol(org, cadence.id, [a.id])).enrolled).toHaveLength(1);
    expect((await eventsOf(org)).map((e) => [e.type, e.data.lead_id, e.data.stop_reason])).toEqual([
      ['cadence.enrolled', a.id, null],
      ['cadence.enrolled', b.id, null],
      ['cadence.stopped', a.id, 'unenrolled'],
      ['cadence.enrolled', a.id, null],
    ]);
  });
});

describe('a merge of two leads', () => {
  it('gives the survivor the source’s enrolments, but for one in a cadence the survivor is active in already', async () => {
    const { org, cadence } = await setup({ active: false });
    const other = await rest(org, 'POST', '/cadences', { name: 'Outra', steps: [{ delay_seconds: 0 }], active: false });
    const [survivor, source] = [await newLead(org), await newLead(org)];
    await enrol(org, cadence.id, [survivor.id, source.id]);
    await enrol(org, other.body.id, [source.id]);
    const merged = await rest(org, 'POST', `/leads/${survivor.id}/merge`, { source_id: source.id });
    expect(merged.status, JSON.stringify(merged.body)).toBe(200);
    const listed = async (id: string) => (await rest(org, 'GET', `/cadences/${id}/enrolments`)).body.data.map((e: any) => e.lead_id);
    expect(await listed(cadence.id)).toEqual([survivor.id]);
    expect(await listed(other.body.id)).toEqual([survivor.id]);
  });
});

describe('the scheduler', () => {
  it('sends each step’s templates in message order, the next step after its delay, then completes', async () => {
    const { org, cadence } = await setup();
    const lead = await newLead(org);
    const [enrolled] = (await enrol(org, cadence.id, [lead.id])).enrolled;
    await until(
      'step 0',
      async () => sentTo(lead.phone),
      (s) => s.length === 2,
    );
    expect(sentTo(lead.phone)).toEqual(['boas_vindas', 'proposta']);
    expect(cloud.sent.find((b) => b.template?.name === 'proposta' && b.to === lead.phone.slice(1)).template.components).toEqual([
      { type: 'body', parameters: [{ type: 'text', text: 'Acme' }] },
    ]);
    const between = await enrolment(org, cadence.id, lead.id);
    expect(between).toMatchObject({ status: 'active', current_step: 1 });
    expect(new Date(between.next_send_at).getTime()).toBeGreaterThan(Date.now() - 2_000);
    const done = await until(
      'completion',
      () => enrolment(org, cadence.id, lead.id),
      (e) => e.status === 'completed',
    );
    expect(done).toMatchObject({ current_step: 2, next_send_at: null, stop_reason: null });
    await until(
      'every step',
      async () => sentTo(lead.phone),
      (s) => s.length >= 3,
    );
    expect(sentTo(lead.phone)).toEqual(['boas_vindas', 'proposta', 'lembrete']);
    expect((await eventsOf(org)).map((e) => [e.type, e.data.step])).toEqual([
      ['cadence.enrolled', 0],
      ['cadence.step_sent', 0],
      ['cadence.step_sent', 1],
      ['cadence.completed', 1],
    ]);
    expect((await eventsOf(org)).every((e) => e.data.enrolment_id === enrolled.id && e.data.cadence_id === cadence.id)).toBe(true);
    // The messages are the lead's, in its conversation, as template messages.
    const history = await api.rest('GET', `/backend/leads/${lead.id}/messages`, { key: org.key });
    expect(history.body.data.map((m: any) => [m.type, m.content])).toEqual([
      ['template', 'Olá Ana!'],
      ['template', 'Sua proposta da Acme está pronta.'],
      ['template', 'Ainda tem interesse?'],
    ]);
  });

  it('sends a step once however often its job runs', async () => {
    const { org, cadence } = await setup({ active: false });
    const lead = await newLead(org);
    const [enrolled] = (await enrol(org, cadence.id, [lead.id])).enrolled;
    // Three more jobs for step 0 (a rerun after a crash, a resume racing the first job), all due now.
    await api.db.sql.query(
      `INSERT INTO jobs (queue, payload, group_key) SELECT 'cadences.send', jsonb_build_object('tenant_id', $1::text, 'enrolment_id', $2::text, 'step', 0), $1::text FROM generate_series(1, 3)`,
      [org.tenantId, enrolled.id],
    );
    expect((await rest(org, 'PUT', `/cadences/${cadence.id}`, { active: true })).status).toBe(200);
    await until(
      'step 0',
      async () => sentTo(lead.phone),
      (s) => s.length >= 2,
    );
    await until(
      'completion',
      () => enrolment(org, cadence.id, lead.id),
      (e) => e.status === 'completed',
    );
    await drained(org);
    await until(
      'every step',
      async () => sentTo(lead.phone),
      (s) => s.length >= 3,
    );
    expect(sentTo(lead.phone)).toEqual(['boas_vindas', 'proposta', 'lembrete']);
    const rows = await api.db.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM cadence_sends WHERE enrolment_id = $1::uuid`, [
      enrolled.id,
    ]);
    expect(rows[0].n).toBe(3);
    const messages = await api.db.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM messages WHERE lead_id = $1::uuid`, [lead.id]);
    expect(messages[0].n).toBe(3);
  });

  it('stops when the lead writes, and sends nothing more', async () => {
    const { org, channel, cadence } = await setup();
    const lead = await newLead(org);
    await enrol(org, cadence.id, [lead.id]);
    await until(
      'step 0',
      async () => sentTo(lead.phone),
      (s) => s.length === 2,
    );
    await inbound(api, org, channel.id, lead.phone, 'Tenho interesse!');
    expect(await enrolment(org, cadence.id, lead.id)).toMatchObject({
      status: 'stopped',
      stop_reason: 'replied',
      current_step: 1,
      next_send_at: null,
    });
    await drained(org);
    expect(sentTo(lead.phone)).toEqual(['boas_vindas', 'proposta']);
    expect((await eventsOf(org)).at(-1)).toMatchObject({
      type: 'cadence.stopped',
      data: { lead_id: lead.id, step: 1, stop_reason: 'replied' },
    });
  });

  it('keeps going after a reply when stop_on_reply is false', async () => {
    const { org, channel, cadence } = await setup({ stop_on_reply: false }, 1);
    const lead = await newLead(org);
    await enrol(org, cadence.id, [lead.id]);
    await inbound(api, org, channel.id, lead.phone, 'Oi');
    await until(
      'completion',
      () => enrolment(org, cadence.id, lead.id),
      (e) => e.status === 'completed',
    );
    await until(
      'every step',
      async () => sentTo(lead.phone),
      (s) => s.length >= 3,
    );
  });

  it('stops when a deal of the lead is won', async () => {
    const { org, cadence } = await setup({}, 3_600);
    const lead = await newLead(org);
    const p = await makePipeline(api, org);
    const deal = await makeDeal(api, org, { title: 'Plano anual', pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id });
    await enrol(org, cadence.id, [lead.id]);
    await until(
      'step 0',
      () => enrolment(org, cadence.id, lead.id),
      (e) => e.current_step === 1,
    );
    const won = await api.rest('PUT', `/backend/pipeline/deals/${deal.id}/stage`, { key: org.key, body: { stage_id: p.ganho } });
    expect(won.status, JSON.stringify(won.body)).toBe(200);
    expect(await enrolment(org, cadence.id, lead.id)).toMatchObject({ status: 'stopped', stop_reason: 'deal_won' });
  });

  it('sends nothing while paused, and resumes where it was', async () => {
    const { org, cadence } = await setup({ active: false }, 0);
    const lead = await newLead(org);
    await enrol(org, cadence.id, [lead.id]);
    await drained(org);
    expect(sentTo(lead.phone)).toEqual([]);
    expect(await enrolment(org, cadence.id, lead.id)).toMatchObject({ status: 'active', current_step: 0 });
    await rest(org, 'PUT', `/cadences/${cadence.id}`, { active: true });
    await until(
      'completion',
      () => enrolment(org, cadence.id, lead.id),
      (e) => e.status === 'completed',
    );
    await until(
      'every step',
      async () => sentTo(lead.phone),
      (s) => s.length >= 3,
    );
    expect(sentTo(lead.phone)).toEqual(['boas_vindas', 'proposta', 'lembrete']);
  });

  it('waits for the send window to open', async () => {
    // A window on one day of the week only, the day after today (UTC): closed now, open tomorrow at 08:00.
    const tomorrow = (new Date().getUTCDay() + 1) % 7 || 7;
    const { org, cadence } = await setup({ send_window: { timezone: 'UTC', days: [tomorrow], from: '08:00', to: '09:00' } });
    const lead = await newLead(org);
    const [enrolled] = (await enrol(org, cadence.id, [lead.id])).enrolled;
    const opening = new Date();
    opening.setUTCDate(opening.getUTCDate() + 1);
    opening.setUTCHours(8, 0, 0, 0);
    expect(enrolled.next_send_at).toBe(opening.toISOString());
    const rows = await api.db.sql.query<{ run_at: Date }>(
      `SELECT run_at FROM jobs WHERE queue = 'cadences.send' AND payload->>'enrolment_id' = $1`,
      [enrolled.id],
    );
    expect(rows.map((r) => r.run_at.toISOString())).toEqual([opening.toISOString()]);
    // Due now (the job moved up), it is put back to the opening, not sent.
    await api.db.sql.query(`UPDATE jobs SET run_at = now() WHERE queue = 'cadences.send' AND payload->>'enrolment_id' = $1`, [enrolled.id]);
    await until(
      'the job put back',
      async () =>
        await api.db.sql.query<{ run_at: Date }>(
          `SELECT run_at FROM jobs WHERE queue = 'cadences.send' AND payload->>'enrolment_id' = $1`,
          [enrolled.id],
        ),
      (r) => r.length === 1 && r[0].run_at.toISOString() === opening.toISOString(),
    );
    expect(sentTo(lead.phone)).toEqual([]);
  });

  it('fails when a step’s template is no longer approved', async () => {
    const { org, cadence } = await setup({ active: false });
    const lead = await newLead(org);
    await syncTemplates(api, org, [providerTemplate('boas_vindas', { text: 'Olá {{1}}!', status: 'PENDING' })]);
    await enrol(org, cadence.id, [lead.id]);
    await rest(org, 'PUT', `/cadences/${cadence.id}`, { active: true });
    const failed = await until(
      'the failure',
      () => enrolment(org, cadence.id, lead.id),
      (e) => e.status !== 'active',
    );
    expect(failed).toMatchObject({ status: 'failed', stop_reason: 'template_not_approved', current_step: 0 });
    expect(sentTo(lead.phone)).toEqual([]);
  });

  it('stops the enrolments of a deleted cadence', async () => {
    const { org, cadence } = await setup({ active: false });
    const lead = await newLead(org);
    await enrol(org, cadence.id, [lead.id]);
    expect((await rest(org, 'DELETE', `/cadences/${cadence.id}`)).status).toBe(204);
    expect((await eventsOf(org)).at(-1)).toMatchObject({
      type: 'cadence.stopped',
      data: { lead_id: lead.id, stop_reason: 'cadence_deleted' },
    });
    expect((await rest(org, 'GET', `/cadences/${cadence.id}/enrolments`)).status).toBe(404);
  });
});
