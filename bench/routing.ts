// Routing's cost on the inbound path: inbound messages from new senders (POST /backend/channels/{id}/inbound,
// BENCH_ROUTING_REQUESTS each run, BENCH_CONNECTIONS at once) into a department with routing off
// (`manual`) beside one with routing on (`balanced`, five online members without a capacity limit), in
// interleaved runs of the same process with its job runner on, so the routing passes run beside the load
// as they would in production. Reported: messages per second of each (best of BENCH_ROUNDS), and that every
// routed conversation got an assignee once the passes drained.
//
// Printed among the last lines: `routing: on_off_ratio=<r>`.
import pg from 'pg';
import { autocannon, type LoadResult } from './autocannon.js';
import type { BenchEnv, BenchLine } from './line.js';

const REQUESTS = Number(process.env.BENCH_ROUTING_REQUESTS ?? 2_000);

async function call(env: BenchEnv, key: string, method: string, path: string, body?: unknown) {
  const r = await fetch(`${env.serverUrl}/backend${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  if (r.status >= 300) throw new Error(`routing bench: ${method} ${path} ${r.status} ${text}`);
  return text ? (JSON.parse(text) as any) : undefined;
}

/** An organisation with a department (routing as given) of five online operators and a channel into it. */
async function organisation(env: BenchEnv, name: string, routing: 'manual' | 'balanced') {
  const org = await env.organisation(name);
  const department = await call(env, org.key, 'POST', '/departments', { name: 'Atendimento', routing });
  const channel = await call(env, org.key, 'POST', '/channels', { name: 'Canal', provider: 'test', department_id: department.id });
  for (let i = 0; i < 5; i++) {
    const user = await call(env, org.key, 'POST', '/users', {
      name: `Atendente ${i}`,
      email: `a${i}@${name.replace(/\W/g, '')}.test`,
      role: 'operator',
    });
    await call(env, org.key, 'POST', `/departments/${department.id}/members`, { user_id: user.data.id });
    await call(env, org.key, 'PUT', `/users/${user.data.id}`, { availability: 'online' });
  }
  return { ...org, url: `${env.serverUrl}/backend/channels/${channel.data.id}/inbound` };
}

export const routingLine: BenchLine = {
  name: 'routing',
  async run(env) {
    const { startJobRunner } = await import('../src/workers.js');
    const pool = new pg.Pool({ connectionString: env.dbUrl, max: 1, options: `-c search_path="${env.schema}"` });
    const variants = [
      { variant: 'off', ...(await organisation(env, 'Bench routing off', 'manual')) },
      { variant: 'on', ...(await organisation(env, 'Bench routing on', 'balanced')) },
    ];
    const runner = await startJobRunner(env.db, env.config);
    const best = new Map<string, LoadResult>();
    let range = 0;
    try {
      for (let round = 0; round < env.rounds; round++)
        for (const v of variants) {
          const r = await autocannon(v.url, {
            method: 'POST',
            headers: { authorization: `Bearer ${v.key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ from: '+[phone]', content: 'Olá, quero falar com um atendente.' }),
            vary: { placeholder: '[phone]', first: 5_531_930_000_000 + range++ * 10_000_000, count: REQUESTS },
            connections: env.connections,
            amount: REQUESTS,
          });
          env.log(`routing: ${v.variant} round ${round + 1}: ${r.rps.toFixed(0)} msg/s, p99 ${r.p99} ms, errors ${r.errors}`);
          if (!best.get(v.variant) || r.rps > best.get(v.variant)!.rps) best.set(v.variant, r);
        }
      // The passes drain: every conversation of the routed organisation has its assignee.
      const deadline = Date.now() + 120_000;
      const unassigned = async () =>
        (
          await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM conversations WHERE tenant_id = $1 AND assignee_id IS NULL`, [
            variants[1].tenantId,
          ])
        ).rows[0].n;
      while ((await unassigned()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      const left = await unassigned();
      const off = best.get('off')!;
      const on = best.get('on')!;
      const ratio = on.rps / off.rps;
      return {
        report: [
          `Routing on the inbound path — ${REQUESTS.toLocaleString('en')} messages from new senders per run, ${env.connections} connections, best of ${env.rounds} interleaved runs, job runner on`,
          '',
          '| department routing | msg/s | p99 ms |',
          '| --- | --- | --- |',
          `| manual (off) | ${off.rps.toFixed(0)} | ${off.p99} |`,
          `| balanced (on) | ${on.rps.toFixed(0)} | ${on.p99} |`,
          '',
          `Routed conversations left without an assignee once the passes drained: ${left}.`,
        ],
        last: [`routing: on_off_ratio=${ratio.toFixed(2)}`],
      };
    } finally {
      await runner.stop({ timeoutMs: 10_000 });
      await pool.end();
    }
  },
};
