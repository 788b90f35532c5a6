// A key used by many requests at once: deleted midway, every answer is 200 or 401 (never a 404 or a
// 500 from the last_used_at write), and its first uses write last_used_at once, not once per request.
import { describe, expect, it } from 'vitest';
import { totalStatements } from '../../src/db/statements.js';
import { useTestApp, type TestClient } from '../helpers/app.js';

const api = useTestApp();

/** A fresh, never used key of a new organisation, with its id. */
async function freshKey() {
  const org = await api.newOrg();
  const created = await api.rest('POST', '/backend/api-keys', { key: org.key, body: { name: 'racing' } });
  return { org, id: created.body.data.id as string, key: created.body.data.key as string };
}

/** Alternates REST and GraphQL, so both authentication paths are raced. */
function use(client: TestClient, key: string, i: number): Promise<number> {
  if (i % 2 === 0) return client.rest('GET', '/backend/tags', { key }).then((r) => r.status);
  return client
    .raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query: '{ tags { id } }' }),
    })
    .then((r) => r.status);
}

/** Runs `fn` synchronously when the `n`th statement from now is sent to the database. */
function afterStatements(n: number, fn: () => Promise<unknown>): Promise<unknown> {
  let count = totalStatements.count;
  const target = count + n;
  return new Promise((resolve, reject) => {
    Object.defineProperty(totalStatements, 'count', {
      configurable: true,
      get: () => count,
      set(value: number) {
        count = value;
        if (count !== target) return;
        Object.defineProperty(totalStatements, 'count', { value: count, writable: true, configurable: true });
        fn().then(resolve, reject);
      },
    });
  });
}

/** Counts the rows UPDATEs really write to api_keys (a statement that matches nothing writes none). */
async function countKeyWrites(fn: () => Promise<unknown>): Promise<number> {
  const sql = api.db.sql;
  await sql.script(`
    CREATE TABLE key_writes (n int NOT NULL);
    CREATE OR REPLACE FUNCTION count_key_write() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO key_writes VALUES (1); RETURN NEW; END $$;
    CREATE TRIGGER count_key_write AFTER UPDATE ON api_keys FOR EACH ROW EXECUTE FUNCTION count_key_write();`);
  try {
    await fn();
    const [row] = await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM key_writes');
    return row.n;
  } finally {
    await sql.script('DROP TRIGGER count_key_write ON api_keys; DROP TABLE key_writes; DROP FUNCTION count_key_write();');
  }
}

describe('a key raced by its own requests', () => {
  it('deleted while 100 requests use it: every answer is 200 or 401', async () => {
    for (const via of ['database', 'api'] as const) {
      const { org, id, key } = await freshKey();
      // Midway: the moment the last request sends its key lookup, before they write the key's last use.
      const deleted = afterStatements(100, () =>
        via === 'database'
          ? api.db.prisma.$executeRaw`DELETE FROM api_keys WHERE id = ${id}::uuid`
          : api.rest('DELETE', `/backend/api-keys/${id}`, { key: org.key }).then((r) => expect(r.status).toBe(204)),
      );
      const answers = Array.from({ length: 100 }, (_, i) => use(api, key, i));
      await deleted;
      const statuses = await Promise.all(answers);
      const tally = statuses.reduce<Record<number, number>>((t, s) => ({ ...t, [s]: (t[s] ?? 0) + 1 }), {});
      expect(
        Object.keys(tally)
          .map(Number)
          .filter((s) => s !== 200 && s !== 401),
        `${via}: ${JSON.stringify(tally)}`,
      ).toEqual([]);
      expect(await use(api, key, 0)).toBe(401);
      expect(await use(api, key, 1)).toBe(401);
    }
  });

  it('50 simultaneous first uses write last_used_at once', async () => {
    const { id, key } = await freshKey();
    const writes = await countKeyWrites(async () => {
      const statuses = await Promise.all(Array.from({ length: 50 }, (_, i) => use(api, key, i)));
      expect(new Set(statuses)).toEqual(new Set([200]));
    });
    expect(writes).toBe(1);
    const row = await api.db.prisma.apiKey.findFirstOrThrow({ where: { id } });
    expect(row.last_used_at).not.toBeNull();
    // Within the resolution, more use writes nothing.
    expect(await countKeyWrites(() => Promise.all(Array.from({ length: 5 }, (_, i) => use(api, key, i))))).toBe(0);
  });
});
