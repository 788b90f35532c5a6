// What a page of conversations costs: the same SQL statements at 20 and 100 rows, and no message read,
// however long a conversation's history. Rows read come from the database's own table statistics; on
// PostgreSQL the app gets a one-connection pool here so that the test can flush the statistics of the
// very backend that served the page (others flush theirs up to ten seconds late).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/client.js';
import { ADMIN_TOKEN, TestClient, type Org } from '../helpers/app.js';
import { openTestDatabase, POSTGRES_URL, testDatabaseKind } from '../helpers/database.js';
import { inbound, makeChannel, nextMobile } from './helpers.js';

let api: TestClient;
let db: Database;
const schema = `funil_test_${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  db =
    testDatabaseKind() === 'postgres'
      ? await openDatabase({ databaseUrl: `${POSTGRES_URL}?schema=${schema}`, poolSize: 1 })
      : await openTestDatabase();
  const config = loadConfig({ NODE_ENV: 'test', ADMIN_TOKEN, PUBLIC_BASE_URL: 'http://funil.test' });
  api = new TestClient(createApp(config, db), db, config);
});

afterAll(async () => {
  await db?.close();
  if (testDatabaseKind() === 'postgres') {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  }
});

/** `n` conversations (one inbound message each), created through the API one after the other (one connection). */
async function conversations(org: Org, channelId: string, n: number) {
  const made = [];
  for (let i = 0; i < n; i++) made.push(await inbound(api, org, channelId, nextMobile(), `mensagem ${i}`));
  return made;
}

/** Tuples and scans the database counted per table so far (statistics flushed first). */
async function tableReads(): Promise<Record<string, number>> {
  await db.sql.query('SELECT pg_stat_force_next_flush()');
  await db.sql.query('SELECT pg_stat_clear_snapshot()');
  const rows = await db.sql.query<{ relname: string; n: string }>(
    `SELECT relname, (coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) + coalesce(seq_scan, 0) + coalesce(idx_scan, 0))::text AS n
     FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname IN ('conversations', 'leads', 'messages')`,
  );
  return Object.fromEntries(rows.map((r) => [r.relname, Number(r.n)]));
}

async function rowsReadDuring(fn: () => Promise<unknown>) {
  const before = await tableReads();
  await fn();
  const after = await tableReads();
  return Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - (before[k] ?? 0)]));
}

describe('the cost of a conversations page', () => {
  it('is the same number of statements at 20 and 100 rows, and reads no message even when a conversation has thousands', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org);
    const made = await conversations(org, channel.id, 100);
    const page = (limit: number) => api.rest('GET', `/backend/conversations?limit=${limit}`, { key: org.key });
    let page20: any;
    let page100: any;
    const at20 = await api.countStatements(async () => (page20 = await page(20)));
    const at100 = await api.countStatements(async () => (page100 = await page(100)));
    expect(page20.body.data).toHaveLength(20);
    expect(page100.body.data).toHaveLength(100);
    expect(at100).toBe(at20);
    // The key lookup and the page (conversation-json.ts: rows, lead, last message and count in one statement).
    expect(at20).toBeLessThanOrEqual(2);

    // The oldest conversation (on the last page) gets 5,000 more messages, and so becomes the newest.
    const quiet = await rowsReadDuring(() => page(20));
    const target = made[0].conversation.id;
    await db.sql.query(
      `INSERT INTO messages (tenant_id, conversation_id, lead_id, channel_id, role, content, status, created_at)
       SELECT c.tenant_id, c.id, c.lead_id, c.channel_id, 'user', 'histórico ' || g, 'received', now() - g * interval '1 second'
       FROM conversations c, generate_series(1, 5000) g WHERE c.id = $1`,
      [target],
    );
    await db.sql.query(`UPDATE conversations SET updated_at = now() + interval '1 minute' WHERE id = $1`, [target]);
    let busy: any;
    const busyStatements = await api.countStatements(async () => (busy = await page(20)));
    const busyReads = await rowsReadDuring(() => page(20));
    expect(busy.body.data[0].id).toBe(target);
    expect(busyStatements).toBe(at20);
    expect(quiet.messages).toBe(0);
    expect(busyReads.messages).toBe(0);
    expect(busyReads.conversations).toBe(quiet.conversations);
    expect(busyReads.leads).toBe(quiet.leads);
    // The statistics do count reads: the history of that conversation reads its messages.
    const history = await rowsReadDuring(() => api.rest('GET', `/backend/leads/${made[0].lead.id}/messages`, { key: org.key }));
    expect(history.messages).toBeGreaterThan(0);
  });
});
