// Routing across two server processes on one PostgreSQL database: inbound messages arrive on both at
// once, both run routing passes, and still no member goes over capacity and no conversation is
// assigned twice (one conversation.assigned each).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { generateApiKey } from '../../src/auth/keys.js';
import { POSTGRES_URL, testDatabaseKind } from '../helpers/env.js';
import { spawnServer } from '../helpers/server-process.js';

const KEY = generateApiKey();
const cleanup: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
});

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

it.runIf(testDatabaseKind() === 'postgres')(
  'two processes route concurrent inbound messages within every member’s capacity, each conversation once',
  { timeout: 180_000 },
  async () => {
    const schema = `funil_test_routing_${randomBytes(4).toString('hex')}`;
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    cleanup.push(async () => {
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    });
    const env = { DATABASE_URL: `${POSTGRES_URL}?schema=${schema}`, BOOTSTRAP_API_KEY: KEY };
    const first = await spawnServer(env);
    await first.listening;
    const second = await spawnServer({ ...env, MIGRATE_ON_START: 'false' });
    await second.listening;
    cleanup.push(async () => {
      for (const s of [first, second]) s.proc.kill('SIGKILL');
    });
    const call = async (port: number, method: string, path: string, body?: unknown, key = KEY) => {
      const r = await fetch(`http://127.0.0.1:${port}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await r.text();
      return { status: r.status, body: text ? JSON.parse(text) : undefined };
    };

    const dept = await call(first.port, 'POST', '/backend/departments', { name: 'Vendas', routing: 'balanced' });
    expect(dept.status, JSON.stringify(dept.body)).toBe(201);
    const channel = await call(first.port, 'POST', '/backend/channels', { name: 'Canal', provider: 'test', department_id: dept.body.id });
    const members: string[] = [];
    for (let i = 0; i < 3; i++) {
      const user = await call(first.port, 'POST', '/backend/users', { name: `Op ${i}`, email: `op${i}@example.com`, role: 'operator' });
      members.push(user.body.data.id);
      expect((await call(first.port, 'POST', `/backend/departments/${dept.body.id}/members`, { user_id: user.body.data.id })).status).toBe(
        200,
      );
      expect((await call(first.port, 'PUT', `/backend/users/${user.body.data.id}`, { capacity: 2, availability: 'online' })).status).toBe(
        200,
      );
    }

    // 24 new customers at once, half through each process.
    const inbound = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        call(i % 2 ? first.port : second.port, 'POST', `/backend/channels/${channel.body.data.id}/inbound`, {
          from: `+55319777${String(10000 + i)}`,
          content: `Oi ${i}`,
        }),
      ),
    );
    expect(inbound.map((r) => r.status)).toEqual(Array(24).fill(200));
    const routingDone = async () =>
      (await client.query(`SELECT count(*)::int AS n FROM "${schema}".jobs WHERE queue = 'conversations.route'`)).rows[0].n === 0;
    await waitUntil('the routing passes', routingDone);
    const counts = async () =>
      (
        await client.query<{ assignee_id: string | null; n: number }>(
          `SELECT assignee_id::text, count(*)::int AS n FROM "${schema}".conversations WHERE status = 'active' GROUP BY 1`,
        )
      ).rows;
    const byAssignee = new Map((await counts()).map((r) => [r.assignee_id, r.n]));
    for (const member of members) expect(byAssignee.get(member)).toBe(2);
    expect(byAssignee.get(null)).toBe(18);
    const assignedEvents = async () =>
      (await client.query(`SELECT data FROM "${schema}".events WHERE type = 'conversation.assigned'`)).rows.map((r) => r.data.id as string);
    let events = await assignedEvents();
    expect(events).toHaveLength(6);
    expect(new Set(events).size).toBe(6);

    // More room, raised through the two processes at once: the waiting ones are handed out, still once each.
    await Promise.all(members.map((id, i) => call(i % 2 ? first.port : second.port, 'PUT', `/backend/users/${id}`, { capacity: 8 })));
    await waitUntil('every conversation assigned', async () => (await counts()).every((r) => r.assignee_id !== null));
    await waitUntil('the routing passes', routingDone);
    for (const r of await counts()) expect(r.n).toBe(8);
    events = await assignedEvents();
    expect(events).toHaveLength(24);
    expect(new Set(events).size).toBe(24);
  },
);
