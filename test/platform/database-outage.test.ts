// A PostgreSQL server that goes away and comes back (a private one, stopped with pg_ctl): every request
// meanwhile is 503 SERVICE_UNAVAILABLE with Retry-After in its route's shape, on REST and GraphQL,
// never 500; /ready says 503; once the server is back the same process serves again by itself, with
// what was acknowledged before kept.
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { ADMIN_TOKEN } from '../helpers/app.js';
import { privatePostgresAvailable, startPrivatePostgres } from '../helpers/private-postgres.js';

const BASE = 'http://funil.test';

describe.runIf(privatePostgresAvailable)('the database goes away', () => {
  it('answers 503 with Retry-After while PostgreSQL is down, and serves again once it is back', async () => {
    const server = await startPrivatePostgres();
    const config = loadConfig({ NODE_ENV: 'test', ADMIN_TOKEN, DATABASE_URL: server.url, PUBLIC_BASE_URL: BASE });
    const db = await openDatabase({ databaseUrl: server.url, poolSize: 4 });
    const app = createApp(config, db);
    try {
      const call = (path: string, init: RequestInit & { key?: string } = {}) =>
        app.fetch(
          new Request(BASE + path, {
            ...init,
            headers: { 'content-type': 'application/json', ...(init.key ? { authorization: `Bearer ${init.key}` } : {}) },
          }),
        );
      const tenant = await call('/backend/admin/tenants', { method: 'POST', key: ADMIN_TOKEN, body: JSON.stringify({ name: 'Outage' }) });
      const key = ((await tenant.json()) as { api_key: string }).api_key;
      const lead = await call('/backend/leads', { method: 'POST', key, body: JSON.stringify({ name: 'Kept', phone: '+5511987651234' }) });
      expect(lead.status).toBe(200);

      server.stop();
      const answers = [
        await call('/backend/leads', { key }),
        await call('/backend/pipelines', { key }),
        await call('/backend/leads', { method: 'POST', key, body: JSON.stringify({ name: 'Lost?', phone: '+5511987651235' }) }),
        await call('/graphql', { method: 'POST', key, body: JSON.stringify({ query: '{ viewer { user { id } } }' }) }),
        await call('/backend/admin/tenants', { method: 'POST', key: ADMIN_TOKEN, body: JSON.stringify({ name: 'During' }) }),
      ];
      const bodies = await Promise.all(answers.map((a) => a.json() as Promise<Record<string, any>>));
      expect(answers.map((a) => a.status)).toEqual([503, 503, 503, 503, 503]);
      for (const a of answers) expect(Number(a.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(bodies[0]).toMatchObject({ success: false, error: { code: 'SERVICE_UNAVAILABLE' } });
      expect(bodies[1]).toMatchObject({ code: 'ERR_SERVICE_UNAVAILABLE' });
      expect(bodies[3].errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE');
      for (const b of bodies) expect(JSON.stringify(b)).not.toMatch(/ECONNREFUSED|postgres|at .*\.ts/i);
      expect((await call('/ready')).status).toBe(503);

      server.start();
      let back = 0;
      for (let i = 0; i < 100 && back !== 200; i++) {
        back = (await call('/backend/leads', { key })).status;
        if (back !== 200) await new Promise((r) => setTimeout(r, 100));
      }
      expect(back).toBe(200);
      const list = (await (await call('/backend/leads', { key })).json()) as { data: { name: string }[] };
      expect(list.data.map((l) => l.name)).toEqual(['Kept']);
      expect((await call('/ready')).status).toBe(200);
    } finally {
      app.close();
      await db.close().catch(() => {});
    }
  });
});
