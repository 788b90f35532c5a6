// A saturated database answers 503 with Retry-After, never 500 (decisions.md "Bounded work"), provoked
// for real. PostgreSQL: a second app on the same schema with a 500 ms statement_timeout and a pool of
// one, while another session holds the organisation's counter row, so a deal creation waits on it until
// PostgreSQL cancels the statement (57014). PGlite (one connection): a transaction held 2.5 s while
// lead creations wait for theirs longer than Prisma's maxWait (2 s, P2028). GraphQL answers a single
// operation that served nothing because of it with HTTP 503 and Retry-After too.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { openDatabase } from '../../src/db/client.js';
import { TestClient, useTestApp } from '../helpers/app.js';
import { POSTGRES_URL, testDatabaseKind } from '../helpers/env.js';
import { makePipeline, makeLead, nextPhone } from '../helpers/factories.js';

const api = useTestApp();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.runIf(testDatabaseKind() === 'postgres')('a statement cut by statement_timeout (PostgreSQL)', () => {
  it('answers 503 ERR_SERVICE_UNAVAILABLE with Retry-After on REST, SERVICE_UNAVAILABLE on GraphQL', async () => {
    const org = await api.newOrg();
    const p = await makePipeline(api, org);
    const lead = await makeLead(api, org);
    const db = await openDatabase({ databaseUrl: (api.db as { url?: string }).url!, poolSize: 1, statementTimeoutMs: 500 });
    const busy = new TestClient(createApp(api.config, db), db, api.config);
    const holder = new pg.Client({
      connectionString: POSTGRES_URL,
      options: `-c search_path=${new URL((api.db as { url?: string }).url!).searchParams.get('schema')}`,
    });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM tenants WHERE id = $1 FOR UPDATE', [org.tenantId]);
      const body = { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id, value: 1 };
      const rest = await busy.rest('POST', '/backend/pipeline/deals', { key: org.key, body });
      expect(rest.status, JSON.stringify(rest.body)).toBe(503);
      expect(rest.body.code).toBe('ERR_SERVICE_UNAVAILABLE');
      expect(Number(rest.headers.get('retry-after'))).toBeGreaterThan(0);
      const graph = await busy.raw('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
        body: JSON.stringify({
          query: `mutation { createDeal(pipeline_id: "${p.id}", stage_id: "${p.entrada}", lead_id: "${lead.id}") { id } }`,
        }),
      });
      const answer = (await graph.json()) as { errors?: { extensions: { code: string } }[] };
      expect(answer.errors?.[0].extensions.code).toBe('SERVICE_UNAVAILABLE');
      // A single operation that served nothing because of it: HTTP 503 with Retry-After, as on REST.
      expect(graph.status).toBe(503);
      expect(Number(graph.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      await holder.end();
      await db.close();
    }
    // Released: the same request succeeds.
    expect(
      (
        await api.rest('POST', '/backend/pipeline/deals', {
          key: org.key,
          body: { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id },
        })
      ).status,
    ).toBe(201);
  });
});

/** A lead created through GraphQL: the HTTP status, Retry-After and the answer. */
async function graphqlCreateLead(key: string) {
  const r = await api.raw('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query: `mutation { createLead(name: "Fila", phone: "${nextPhone()}") { id } }` }),
  });
  return {
    status: r.status,
    retryAfter: r.headers.get('retry-after'),
    body: (await r.json()) as { data?: { createLead: { id: string } | null } | null; errors?: { extensions: { code: string } }[] },
  };
}

/** Holds the database 4 s: PGlite's one connection, or every connection of PostgreSQL's pool. */
function holdDatabase() {
  const hold = () =>
    api.db.prisma.$transaction(
      async (tx) => {
        await tx.$queryRaw`SELECT 1`;
        await sleep(4000);
      },
      { maxWait: 20_000, timeout: 30_000 },
    );
  return Promise.all(Array.from({ length: testDatabaseKind() === 'postgres' ? 20 : 1 }, hold));
}

describe('transactions that wait past maxWait', () => {
  it('answer 503 SERVICE_UNAVAILABLE with Retry-After, never 500; the others succeed (200)', async () => {
    const org = await api.newOrg();
    // Whether creations are already waiting for a transaction when the database is held depends on the
    // machine's load (on a loaded one they may still be authenticating): up to eight attempts, every
    // answer of each 200 or 503, and at least one attempt with a 503. (PGlite had three: on a fast 2 ×
    // EPYC all three missed in 1 run of 4 of this test alone, and once in CI.)
    let refused: Awaited<ReturnType<typeof api.rest>>[] = [];
    for (let attempt = 0; attempt < 8 && refused.length === 0; attempt++) {
      const creations = Array.from({ length: 40 }, () =>
        api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'Fila', phone: nextPhone() } }),
      );
      // Once the first creations have authenticated and wait for their transactions, hold the database
      // (warm requests get there sooner: each attempt holds it at another moment).
      await sleep([50, 10, 30, 60, 100, 5, 20, 80][attempt]);
      const held = api.db.prisma.$transaction(
        async (tx) => {
          await tx.$queryRaw`SELECT 1`;
          await sleep(4000);
        },
        { maxWait: 20_000, timeout: 30_000 },
      );
      // On PostgreSQL the pool has room: hold every connection of it instead.
      const more =
        testDatabaseKind() === 'postgres'
          ? Array.from({ length: 19 }, () =>
              api.db.prisma.$transaction(
                async (tx) => {
                  await tx.$queryRaw`SELECT 1`;
                  await sleep(4000);
                },
                { maxWait: 20_000, timeout: 30_000 },
              ),
            )
          : [];
      const answers = await Promise.all(creations);
      await Promise.all([held, ...more]);
      const statuses = answers.map((a) => a.status);
      expect(
        statuses.filter((s) => s !== 200 && s !== 503),
        JSON.stringify(answers.filter((a) => a.status !== 200 && a.status !== 503).map((a) => a.body)).slice(0, 500),
      ).toEqual([]);
      refused = answers.filter((a) => a.status === 503);
    }
    // On both databases some creation is caught waiting. (On PGlite it once depended on the port's
    // order: replies from its thread starved the timer that holds the database, pglite-remote.ts.)
    expect(refused.length).toBeGreaterThan(0);
    for (const a of refused) {
      expect(a.body).toMatchObject({ success: false, error: { code: 'SERVICE_UNAVAILABLE' } });
      expect(Number(a.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  }, 120_000);

  it('answer HTTP 503 with Retry-After on GraphQL too, never a 200 whose only error is the saturation', async () => {
    const org = await api.newOrg();
    const answers: Awaited<ReturnType<typeof graphqlCreateLead>>[] = [];
    // Which creations are waiting for a transaction when the database is held depends on the machine's
    // load: try a few times, letting them authenticate for more or less long first.
    for (const wait of [10, 30, 60, 100, 5]) {
      if (answers.some((a) => a.status === 503)) break;
      const creations = Array.from({ length: 40 }, () => graphqlCreateLead(org.key));
      await sleep(wait);
      const held = holdDatabase();
      answers.push(...(await Promise.all(creations)));
      await held;
    }
    for (const a of answers) {
      expect([200, 503], JSON.stringify(a.body)).toContain(a.status);
      if (a.status === 200) expect(a.body.data?.createLead?.id, JSON.stringify(a.body)).toBeTruthy();
      else {
        expect(a.body.errors?.map((e) => e.extensions.code)).toEqual(['SERVICE_UNAVAILABLE']);
        expect(Number(a.retryAfter)).toBeGreaterThan(0);
      }
    }
    expect(answers.filter((a) => a.status === 503).length).toBeGreaterThan(0);
  }, 120_000);
});
