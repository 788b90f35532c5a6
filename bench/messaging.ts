// The messaging lines of `npm run bench`, each (a) the REST route beside (c) a hand-written raw-SQL
// handler doing the same work (bench/messaging-raw.ts), with SQL statements per request:
//
//   conversations  GET /backend/conversations at limit 20 and 100 over BENCH_CONVERSATIONS (10,000)
//                  conversations holding BENCH_MESSAGES (1,000,000) messages, BENCH_LONG_CONVERSATIONS
//                  (10) of them with half the messages (the most recent, so on the first page).
//                  The JSON of (a) and (c) is checked to be the same first.
//   inbound        POST /backend/channels/{id}/inbound: BENCH_INBOUND_REQUESTS (5,000) messages per run
//                  from BENCH_INBOUND_SENDERS (1,000) phones new to each run (so every run creates as
//                  many leads and conversations, and then writes into them), messages per second.
//
// Alone: `BENCH_ONLY=conversations` (seeds for a few minutes), `BENCH_ONLY=inbound` (no seeding).
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import { autocannon, pad, type LoadResult } from './autocannon.js';
import type { BenchEnv, BenchLine } from './line.js';

const CONVERSATIONS = Number(process.env.BENCH_CONVERSATIONS ?? 10_000);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 1_000_000);
const LONG_CONVERSATIONS = Number(process.env.BENCH_LONG_CONVERSATIONS ?? 10);
const INBOUND_REQUESTS = Number(process.env.BENCH_INBOUND_REQUESTS ?? 5_000);
const INBOUND_SENDERS = Number(process.env.BENCH_INBOUND_SENDERS ?? 1_000);
const POOL = 10;

type Row = { scenario: string; variant: string; r: LoadResult; statements: string };

const header = (first: string, width: number) => [
  `| ${pad(first, width)} | ${pad('variant', 11)} | ${pad('req/s', 8)} | ${pad('p50 ms', 7)} | ${pad('p99 ms', 7)} | ${pad('SQL/req', 9)} | errors |`,
  `| ${'-'.repeat(width)} | ${'-'.repeat(11)} | ${'-'.repeat(8)} | ${'-'.repeat(7)} | ${'-'.repeat(7)} | ${'-'.repeat(9)} | ------ |`,
];
const tableRow = (row: Row, width: number) =>
  `| ${pad(row.scenario, width)} | ${pad(row.variant, 11)} | ${pad(row.r.rps.toFixed(1), 8)} | ${pad(row.r.p50, 7)} | ${pad(row.r.p99, 7)} | ${pad(row.statements, 9)} | ${row.r.errors} |`;

/** Runs each variant `rounds` times, interleaved, after a warm-up; keeps the best run of each. */
async function bestOf<V extends { variant: string }>(
  env: BenchEnv,
  variants: V[],
  run: (v: V, round: number) => Promise<LoadResult>,
  warmUp?: (v: V) => Promise<unknown>,
) {
  if (warmUp) for (const v of variants) await warmUp(v);
  const best = new Map<string, LoadResult>();
  for (let round = 0; round < env.rounds; round++) {
    for (const v of variants) {
      const r = await run(v, round);
      const prev = best.get(v.variant);
      if (!prev || r.rps > prev.rps) best.set(v.variant, r);
    }
  }
  return best;
}

/** The JSON with every leaf replaced by its type: two answers about different records have the same shape. */
function shapeOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shapeOf);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shapeOf(v)]));
  return value === null ? null : typeof value;
}

/** The last run's REST/raw throughput ratios at limit 20 and 100, for the `messaging ratios:` line. */
export const conversationsRatios: { 20?: string; 100?: string } = {};

export const conversationsLine: BenchLine = {
  name: 'conversations',
  async run(env) {
    const { totalStatements } = await import('../src/db/statements.js');
    const { seedConversations } = await import('./messaging-seed.js');
    const { startRawMessagingServer } = await import('./messaging-raw.js');

    const seedPool = new pg.Pool({ connectionString: env.dbUrl, max: 2, options: `-c search_path="${env.schema}"` });
    const t0 = Date.now();
    const seeded = await seedConversations(seedPool, {
      conversations: CONVERSATIONS,
      messages: MESSAGES,
      longConversations: LONG_CONVERSATIONS,
      log: env.log,
    });
    const {
      rows: [longest],
    } = await seedPool.query(
      `SELECT count(*)::int AS n FROM messages WHERE tenant_id = $1 GROUP BY conversation_id ORDER BY count(*) DESC LIMIT 1`,
      [seeded.tenantId],
    );
    await seedPool.end();
    env.log(`conversations: seeded in ${((Date.now() - t0) / 1000).toFixed(0)} s (longest history ${longest?.n ?? 0} messages)`);
    const raw = await startRawMessagingServer(env.dbUrl, env.schema, POOL);
    const auth = { authorization: `Bearer ${seeded.key}` };

    const rows: Row[] = [];
    try {
      for (const limit of [20, 100]) {
        const scenario = `conversations, limit ${limit}`;
        const rest = `${env.serverUrl}/backend/conversations?limit=${limit}`;
        const rawUrl = `${raw.url}/conversations?limit=${limit}`;
        // One request of each, sequential: the JSON must agree, and the statements are counted.
        const restBefore = totalStatements.count;
        const restRes = await fetch(rest, { headers: auth });
        const restJson = await restRes.json();
        const restStatements = totalStatements.count - restBefore;
        if (restRes.status !== 200) throw new Error(`${scenario}: REST ${restRes.status} ${JSON.stringify(restJson)}`);
        const rawBefore = raw.statements.count;
        const rawJson = await (await fetch(rawUrl, { headers: auth })).json();
        const rawStatements = raw.statements.count - rawBefore;
        if (!isDeepStrictEqual(rawJson, restJson)) throw new Error(`${scenario}: the raw handler's JSON differs from REST's`);
        env.log(`${scenario}: same JSON — raw yes`);

        const variants = [
          { variant: '(a) REST', url: rest, statements: restStatements },
          { variant: '(c) raw SQL', url: rawUrl, statements: rawStatements },
        ];
        const best = await bestOf(
          env,
          variants,
          (v) => autocannon(v.url, { headers: auth, connections: env.connections, duration: env.duration }),
          (v) => autocannon(v.url, { headers: auth, connections: env.connections, duration: 2 }),
        );
        for (const v of variants) rows.push({ scenario, variant: v.variant, r: best.get(v.variant)!, statements: String(v.statements) });
        env.log(`${scenario}: done`);
      }
    } finally {
      await raw.close();
    }

    const [a20, c20, a100, c100] = rows.map((r) => r.r);
    const [s20, s100] = [rows[0].statements, rows[2].statements];
    const report = [
      `Conversations — ${env.connections} connections, ${env.duration} s per run, best of ${env.rounds} interleaved runs`,
      `data: ${CONVERSATIONS.toLocaleString('en')} conversations, ${MESSAGES.toLocaleString('en')} messages (${LONG_CONVERSATIONS} conversations hold half of them, on the first page)`,
      '',
      ...header('scenario', 26),
      ...rows.map((r) => tableRow(r, 26)),
      '',
      `- (a)/(c) throughput: limit 20 ${(a20.rps / c20.rps).toFixed(2)}×, limit 100 ${(a100.rps / c100.rps).toFixed(2)}×; statements (a) ${s20} at 20 and ${s100} at 100 (the page never reads messages)`,
    ];
    conversationsRatios[20] = (a20.rps / c20.rps).toFixed(2);
    conversationsRatios[100] = (a100.rps / c100.rps).toFixed(2);
    return {
      report,
      summary: [`conversations/raw 20=${conversationsRatios[20]} 100=${conversationsRatios[100]}`],
      ratios: { 'conversations/raw 20': a20.rps / c20.rps, 'conversations/raw 100': a100.rps / c100.rps },
    };
  },
};

export const inboundLine: BenchLine = {
  name: 'inbound',
  async run(env) {
    const { totalStatements } = await import('../src/db/statements.js');
    const { seedOrganisation } = await import('./messaging-seed.js');
    const { startRawMessagingServer } = await import('./messaging-raw.js');

    const seedPool = new pg.Pool({ connectionString: env.dbUrl, max: 1, options: `-c search_path="${env.schema}"` });
    const seeded = await seedOrganisation(seedPool, 'Bench inbound');
    await seedPool.end();
    const raw = await startRawMessagingServer(env.dbUrl, env.schema, POOL);
    const headers = { authorization: `Bearer ${seeded.key}`, 'content-type': 'application/json' };
    const paths = {
      rest: `${env.serverUrl}/backend/channels/${seeded.channelId}/inbound`,
      raw: `${raw.url}/channels/${seeded.channelId}/inbound`,
    };
    const body = (from: string) => JSON.stringify({ from, content: 'Olá, gostaria de saber o prazo de entrega do meu pedido.' });
    // Every load run takes its senders from a range of its own: 1 is the sequential probes, 2… the runs.
    const firstPhone = (range: number) => 5_511_900_000_000 + range * 10_000_000;

    const rows: Row[] = [];
    try {
      // Sequential probes: a new sender, then the same sender again, on each; the answers' shapes must agree.
      const probe = async (url: string, from: string, count: () => number) => {
        const before = count();
        const res = await fetch(url, { method: 'POST', headers, body: body(from) });
        const json = await res.json();
        if (res.status !== 200) throw new Error(`inbound probe ${url}: ${res.status} ${JSON.stringify(json)}`);
        return { json, statements: count() - before };
      };
      const appCount = () => totalStatements.count;
      const rawCount = () => raw.statements.count;
      const [restNew, restKnown] = [
        await probe(paths.rest, `+${firstPhone(1)}`, appCount),
        await probe(paths.rest, `+${firstPhone(1)}`, appCount),
      ];
      const [rawNew, rawKnown] = [
        await probe(paths.raw, `+${firstPhone(1) + 1}`, rawCount),
        await probe(paths.raw, `+${firstPhone(1) + 1}`, rawCount),
      ];
      env.log(`inbound: same JSON shape — raw ${isDeepStrictEqual(shapeOf(rawKnown.json), shapeOf(restKnown.json)) ? 'yes' : 'NO'}`);

      const variants = [
        { variant: '(a) REST', url: paths.rest, statements: `${restNew.statements} / ${restKnown.statements}` },
        { variant: '(c) raw SQL', url: paths.raw, statements: `${rawNew.statements} / ${rawKnown.statements}` },
      ];
      let range = 2;
      const load = (url: string, amount: number) =>
        autocannon(url, {
          method: 'POST',
          headers,
          body: body('+[phone]'),
          vary: { placeholder: '[phone]', first: firstPhone(range++), count: INBOUND_SENDERS },
          connections: env.connections,
          amount,
        });
      const best = await bestOf(
        env,
        variants,
        (v) => load(v.url, INBOUND_REQUESTS),
        (v) => load(v.url, Math.min(500, INBOUND_REQUESTS)),
      );
      for (const v of variants)
        rows.push({ scenario: 'inbound messages', variant: v.variant, r: best.get(v.variant)!, statements: v.statements });
    } finally {
      await raw.close();
    }

    const [a, c] = rows.map((r) => r.r);
    const report = [
      `Inbound messages — ${env.connections} connections, ${INBOUND_REQUESTS.toLocaleString('en')} messages per run from ${INBOUND_SENDERS.toLocaleString('en')} new senders, best of ${env.rounds} interleaved runs`,
      '',
      ...header('scenario', 16),
      ...rows.map((r) => tableRow(r, 16)),
      '',
      `- SQL/req: a new sender (lead and conversation created) / a known one. (a)/(c) throughput ${(a.rps / c.rps).toFixed(2)}×`,
    ];
    const ratio = (a.rps / c.rps).toFixed(2);
    return {
      report,
      summary: [
        `inbound: (a) ${a.rps.toFixed(0)} msg/s, (c) ${c.rps.toFixed(0)} msg/s, (a)/(c) ${ratio}×; statements ${rows[0].statements} vs ${rows[1].statements}`,
      ],
      ratios: { 'inbound/raw': a.rps / c.rps },
    };
  },
};
