// The deals and conversations pages are planned once per statement text, not at every request: their
// page size is written into the text (src/limit-sql.ts), so PostgreSQL keeps the prepared statement's
// generic plan. With `LIMIT $n` it planned every execution anew (about 1 ms of PGlite's 3.6 ms per deals
// page). Read from pg_prepared_statements, on a server with one database session (PGlite has one; on
// PostgreSQL a second server over the same schema with a pool of one).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { openDatabase, type Database } from '../../src/db/client.js';
import { limitSql } from '../../src/limit-sql.js';
import { TestClient, useTestApp, type Org } from '../helpers/app.js';
import { createDeal, makeLead, makePipeline, type PipelineFixture } from '../helpers/factories.js';
import { inbound, makeChannel, nextMobile } from '../messaging/helpers.js';

const api = useTestApp();
let org: Org;
let p: PipelineFixture;
/** The server whose statements are read: the test app on PGlite, one over a pool of one on PostgreSQL. */
let server: TestClient;
let ownDb: Database | undefined;

beforeAll(async () => {
  org = await api.newOrg();
  p = await makePipeline(api, org);
  const lead = await makeLead(api, org, { name: 'Plano' });
  for (let i = 0; i < 3; i++)
    expect((await createDeal(api, org, { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id })).status).toBe(201);
  const channel = await makeChannel(api, org);
  for (let i = 0; i < 3; i++) await inbound(api, org, channel.id, nextMobile());
  const url = (api.db as Database & { url?: string }).url;
  if (url) {
    ownDb = await openDatabase({ databaseUrl: url, poolSize: 1, migrate: false });
    server = new TestClient(createApp(api.config, ownDb), ownDb, api.config);
  } else server = api;
});

afterAll(async () => {
  await ownDb?.close();
});

/** The session's prepared statements whose text contains `marker`: how often each was planned. */
async function plans(marker: string) {
  const rows = await server.db.sql.query<{ statement: string; generic_plans: string; custom_plans: string }>(
    `SELECT statement, generic_plans::text, custom_plans::text FROM pg_prepared_statements WHERE statement LIKE $1`,
    [`%${marker}%`],
  );
  return rows.map((r) => ({ text: r.statement, generic: Number(r.generic_plans), custom: Number(r.custom_plans) }));
}

describe('page statements keep one plan', () => {
  it.each([
    ['deals', () => `/backend/pipelines/${p.id}/deals?limit=20`, 'FROM deals d WHERE'],
    ['conversations', () => '/backend/conversations?limit=20', 'FROM conversations c WHERE'],
  ])('the %s page: 12 requests, at most 5 planned for them (PostgreSQL tries custom plans 5 times)', async (_name, path, marker) => {
    for (let i = 0; i < 12; i++) {
      const r = await server.rest('GET', path(), { key: org.key });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.data).toHaveLength(3);
    }
    const [page, ...others] = (await plans(marker)).filter((s) => s.text.includes('LIMIT 20'));
    expect(others).toEqual([]);
    expect(page.text).not.toMatch(/LIMIT \$\d/);
    expect(page.generic + page.custom).toBeGreaterThanOrEqual(12);
    expect(page.custom).toBeLessThanOrEqual(5);
  });

  it('a later page keeps its offset as a parameter: one statement for every page number', async () => {
    for (const page of [2, 3, 4])
      expect((await server.rest('GET', `/backend/pipelines/${p.id}/deals?limit=1&page=${page}`, { key: org.key })).status).toBe(200);
    const later = (await plans('FROM deals d WHERE')).filter((s) => /LIMIT 1 OFFSET \$\d/.test(s.text));
    expect(later).toHaveLength(1);
    expect(later[0].generic + later[0].custom).toBe(3);
  });
});

describe('limitSql', () => {
  it('writes bounded numbers into the text, a later offset as a parameter, and refuses what is not a count', () => {
    expect(limitSql(20).text).toBe('LIMIT 20');
    expect(limitSql(1, 19, true).text).toBe('LIMIT 1 OFFSET 19');
    const later = limitSql(20, 40);
    expect([later.text, later.values]).toEqual(['LIMIT 20 OFFSET $1', [40]]);
    for (const bad of [
      [1.5, 0],
      [-1, 0],
      [20, -20],
      [Number.NaN, 0],
      [20, 2 ** 60],
    ])
      expect(() => limitSql(bad[0], bad[1])).toThrow(/not a page window/);
  });
});
