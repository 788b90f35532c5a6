// A graceful stop with a messageAdded subscription open: the real server process (`npm start`) ends the
// SSE stream (Yoga's `complete` event) once its listener closes, so SIGTERM exits 0 well before
// SHUTDOWN_TIMEOUT_MS instead of waiting for a subscriber that never hangs up (which would be exit 1).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migratedDataDir } from '../helpers/database.js';
import { POSTGRES_URL, testDatabaseKind } from '../helpers/env.js';
import { spawnServer } from '../helpers/server-process.js';
import { generateApiKey } from '../../src/auth/keys.js';

const KEY = generateApiKey();
const schema = `funil_test_live_${randomBytes(4).toString('hex')}`;
const dataDir = migratedDataDir('funil-live-stop-');

afterAll(async () => {
  fs.rmSync(dataDir, { recursive: true, force: true });
  if (testDatabaseKind() !== 'postgres') return;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
});

describe('graceful stop with an open subscription', () => {
  it('ends the SSE stream and exits 0 without waiting for SHUTDOWN_TIMEOUT_MS', async () => {
    const server = await spawnServer({
      BOOTSTRAP_API_KEY: KEY,
      SHUTDOWN_TIMEOUT_MS: '20000',
      ...(testDatabaseKind() === 'postgres' ? { DATABASE_URL: `${POSTGRES_URL}?schema=${schema}` } : { DATA_DIR: dataDir }),
    });
    await server.listening;
    const base = `http://127.0.0.1:${server.port}`;
    const auth = { authorization: `Bearer ${KEY}` };

    const response = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription { messageAdded { content } }' }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let received = '';
    const readUntil = async (pattern: RegExp) => {
      while (!pattern.test(received)) {
        const { done, value } = await reader.read();
        if (done) return false;
        received += decoder.decode(value, { stream: true });
      }
      return true;
    };

    // The stream is live: an inbound message arrives on it (retried until the subscription is registered).
    const channel = await (
      await fetch(`${base}/backend/channels`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Canal', provider: 'test' }),
      })
    ).json();
    const arrived = readUntil(/"content":"olá"/);
    let delivered = false;
    void arrived.then(() => (delivered = true));
    while (!delivered) {
      const r = await fetch(`${base}/backend/channels/${channel.data.id}/inbound`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ from: '+5511988776655', content: 'olá' }),
      });
      expect(r.status).toBe(200);
      await Promise.race([arrived, new Promise((resolve) => setTimeout(resolve, 200))]);
    }

    server.proc.kill('SIGTERM');
    // The stream completes (Yoga's `complete` event) and the body ends; the process exits cleanly.
    expect(await readUntil(/event: complete/)).toBe(true);
    expect((await reader.read()).done).toBe(true);
    expect(await server.exited).toBe(0);
    expect(server.output()).not.toMatch(/shutdown timed out/);
  }, 150_000); // a fresh PGlite data directory takes tens of seconds to migrate on a loaded machine
});
