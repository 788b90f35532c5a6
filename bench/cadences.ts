// Cadence sends: BENCH_CADENCE_ENROLMENTS (10,000) enrolments of a one-step cadence fall due at once
// (the cadence resumed) and are drained to a fake WhatsApp Cloud API on loopback: (a) Funil's job
// runner (cadences.send stores each template message, messages.deliver posts it), beside (c) a raw loop
// doing the same work with hand-written SQL on as many connections as the runner has job slots: claim a
// due enrolment (FOR UPDATE SKIP LOCKED), render the body, store the message and advance the enrolment
// in one transaction, POST it, record it sent. Reported: sends per second until the last POST, and the
// lateness of each send (its POST's time minus the moment all fell due), p99.
//
// Printed among the last lines: `cadences: sends_per_s=<n> raw_per_s=<n> ratio=<r> lateness_p99_ms=<ms>`.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { percentile } from './autocannon.js';
import type { BenchEnv, BenchLine } from './line.js';

const ENROLMENTS = Number(process.env.BENCH_CADENCE_ENROLMENTS ?? 10_000);
const BODY = 'Olá {{1}}, temos novidades para você.';

/** A fake Cloud API: every POST's recipient and arrival time, answered 200 with a new wamid at once. */
async function fakeCloudApi() {
  const arrivals = new Map<string, number[]>();
  let n = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { to: string };
      const prefix = body.to.slice(0, 6);
      let list = arrivals.get(prefix);
      if (!list) arrivals.set(prefix, (list = []));
      list.push(at);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ messages: [{ id: `wamid.bench${++n}` }] }));
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** The arrival times of the sends to phones starting with `prefix` (country, area and the variant's digit). */
    arrivals: (prefix: string) => arrivals.get(prefix) ?? [],
    close: () => (server.closeAllConnections(), new Promise((resolve) => server.close(resolve))),
  };
}

async function call(env: BenchEnv, key: string, method: string, path: string, body?: unknown) {
  const r = await fetch(`${env.serverUrl}/backend${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  if (r.status >= 300) throw new Error(`cadences bench: ${method} ${path} ${r.status} ${text}`);
  return text ? (JSON.parse(text) as any) : undefined;
}

/** An organisation with a Cloud channel, an approved template, a paused one-step cadence and its leads, enrolled. */
async function organisation(env: BenchEnv, pool: pg.Pool, name: string, apiUrl: string, prefix: string) {
  const org = await env.organisation(name);
  const channel = await call(env, org.key, 'POST', '/channels', {
    name: 'WhatsApp',
    provider: 'whatsapp_cloud',
    config: { api_url: apiUrl, phone_number_id: '4343', access_token: 'token' },
  });
  const template = { id: 'bench-1', name: 'novidades', language: 'pt_BR', status: 'APPROVED', category: 'MARKETING' };
  await call(env, org.key, 'POST', '/templates/sync', {
    app_id: 'bench',
    templates: [{ ...template, components: [{ type: 'BODY', text: BODY }] }],
  });
  const [synced] = await call(env, org.key, 'GET', '/templates');
  const cadence = await call(env, org.key, 'POST', '/cadences', { name: 'Novidades', steps: [{ delay_seconds: 0 }], active: false });
  await call(env, org.key, 'POST', '/templates/cadence-associations', {
    cadence_id: cadence.id,
    template_id: synced.id,
    step_index: 0,
    message_index: 0,
    parameter_mapping: { '1': '{{LEAD_FIRSTNAME}}' },
  });
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO leads (tenant_id, name, phone) SELECT $1::uuid, 'Cliente ' || n, '+' || $2 || lpad(n::text, 7, '0')
     FROM generate_series(1, $3::int) AS n RETURNING id::text AS id`,
    [org.tenantId, prefix, ENROLMENTS],
  );
  for (let i = 0; i < rows.length; i += 1_000)
    await call(env, org.key, 'POST', `/cadences/${cadence.id}/enrolments`, {
      lead_ids: rows.slice(i, i + 1_000).map((r) => r.id),
      channel_id: channel.data.id,
    });
  return { ...org, cadenceId: cadence.id as string, channelId: channel.data.id as string, templateId: synced.id as string };
}

async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 600_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`cadences bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface Run {
  sendsPerSecond: number;
  latenessP99: number;
}

function measured(arrivals: number[], due: number): Run {
  const lateness = arrivals.map((at) => at - due).sort((a, b) => a - b);
  return { sendsPerSecond: arrivals.length / ((Math.max(...arrivals) - due) / 1000), latenessP99: percentile(lateness, 99) };
}

/** (c): the same claim, render, store, POST and record with hand-written SQL, one connection per job slot. */
async function rawDrain(
  pool: pg.Pool,
  org: { tenantId: string; cadenceId: string; channelId: string; templateId: string },
  apiUrl: string,
  slots: number,
) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: slots });
  const post = (body: string) =>
    new Promise<string>((resolve, reject) => {
      const req = http.request(
        `${apiUrl}/v21.0/4343/messages`,
        { method: 'POST', agent, headers: { 'content-type': 'application/json', authorization: 'Bearer token' } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () =>
            resolve((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messages: { id: string }[] }).messages[0].id),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const worker = async () => {
    const client = await pool.connect();
    try {
      for (;;) {
        await client.query('BEGIN');
        const { rows } = await client.query<{ id: string; lead_id: string; name: string; phone: string }>(
          `SELECT e.id, e.lead_id, l.name, l.phone FROM cadence_enrolments e JOIN leads l ON l.tenant_id = e.tenant_id AND l.id = e.lead_id
           WHERE e.tenant_id = $1 AND e.cadence_id = $2 AND e.status = 'active' AND e.current_step = 0
           ORDER BY e.created_at, e.id LIMIT 1 FOR UPDATE OF e SKIP LOCKED`,
          [org.tenantId, org.cadenceId],
        );
        if (!rows.length) {
          await client.query('COMMIT');
          return;
        }
        const [e] = rows;
        const first = e.name.split(' ')[0];
        const conversation = await client.query<{ id: string }>(
          `INSERT INTO conversations (tenant_id, lead_id, channel_id, last_message_content, last_message_role, last_message_at)
           VALUES ($1, $2, $3, $4, 'assistant', now()) RETURNING id`,
          [org.tenantId, e.lead_id, org.channelId, BODY.replace('{{1}}', first)],
        );
        const message = await client.query<{ id: string }>(
          `INSERT INTO messages (tenant_id, conversation_id, lead_id, channel_id, role, type, content, status, template_id, template_parameters)
           VALUES ($1, $2, $3, $4, 'assistant', 'template', $5, 'pending', $6, ARRAY[$7]) RETURNING id`,
          [org.tenantId, conversation.rows[0].id, e.lead_id, org.channelId, BODY.replace('{{1}}', first), org.templateId, first],
        );
        await client.query(
          `UPDATE cadence_enrolments SET status = 'completed', current_step = 1, next_send_at = NULL WHERE tenant_id = $1 AND id = $2`,
          [org.tenantId, e.id],
        );
        await client.query('COMMIT');
        const wamid = await post(
          JSON.stringify({
            messaging_product: 'whatsapp',
            recipient_type: 'individual',
            to: e.phone.slice(1),
            type: 'template',
            template: {
              name: 'novidades',
              language: { code: 'pt_BR' },
              components: [{ type: 'body', parameters: [{ type: 'text', text: first }] }],
            },
          }),
        );
        await client.query(`UPDATE messages SET status = 'sent', provider_message_id = $3 WHERE tenant_id = $1 AND id = $2`, [
          org.tenantId,
          message.rows[0].id,
          wamid,
        ]);
      }
    } finally {
      client.release();
    }
  };
  await Promise.all(Array.from({ length: slots }, worker));
  agent.destroy();
}

export const cadencesLine: BenchLine = {
  name: 'cadences',
  async run(env) {
    const pool = new pg.Pool({
      connectionString: env.dbUrl,
      max: env.config.workerConcurrency + 2,
      options: `-c search_path="${env.schema}"`,
    });
    const cloud = await fakeCloudApi();
    const { startJobRunner } = await import('../src/workers.js');
    try {
      const a = await organisation(env, pool, 'Bench cadences', cloud.url, '553191');
      const c = await organisation(env, pool, 'Bench cadences raw', cloud.url, '553192');
      const pendingSteps = async () =>
        (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE queue = 'cadences.send'`)).rows[0].n;
      // The paused cadences' first jobs end without sending; then (a) resumes, and all its sends are due.
      const runner = await startJobRunner(env.db, env.config);
      let funil: Run;
      try {
        await waitFor('the paused jobs', async () => (await pendingSteps()) === 0);
        const due = Date.now();
        await call(env, a.key, 'PUT', `/cadences/${a.cadenceId}`, { active: true });
        await waitFor('every send of (a)', () => cloud.arrivals('553191').length >= ENROLMENTS);
        funil = measured(cloud.arrivals('553191'), due);
      } finally {
        await runner.stop({ timeoutMs: 10_000 });
      }
      env.log(`cadences: funil ${funil.sendsPerSecond.toFixed(0)} sends/s, lateness p99 ${funil.latenessP99.toFixed(0)} ms`);
      const due = Date.now();
      await rawDrain(pool, c, cloud.url, env.config.workerConcurrency);
      const raw = measured(cloud.arrivals('553192'), due);
      env.log(`cadences: raw ${raw.sendsPerSecond.toFixed(0)} sends/s, lateness p99 ${raw.latenessP99.toFixed(0)} ms`);
      const ratio = funil.sendsPerSecond / raw.sendsPerSecond;
      return {
        report: [
          `Cadence sends — ${ENROLMENTS.toLocaleString('en')} enrolments due at once, drained to a loopback Cloud API (${env.config.workerConcurrency} job slots; the raw loop on as many connections)`,
          '',
          '| variant | sends/s | lateness p99 ms |',
          '| --- | --- | --- |',
          `| (a) Funil | ${funil.sendsPerSecond.toFixed(0)} | ${funil.latenessP99.toFixed(0)} |`,
          `| (c) raw SQL loop | ${raw.sendsPerSecond.toFixed(0)} | ${raw.latenessP99.toFixed(0)} |`,
        ],
        last: [
          `cadences: sends_per_s=${funil.sendsPerSecond.toFixed(0)} raw_per_s=${raw.sendsPerSecond.toFixed(0)} ratio=${ratio.toFixed(2)} lateness_p99_ms=${funil.latenessP99.toFixed(0)}`,
        ],
      };
    } finally {
      await cloud.close();
      await pool.end();
    }
  },
};
