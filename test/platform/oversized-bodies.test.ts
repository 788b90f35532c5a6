// A body over the limit sent whole, without `Expect: 100-continue` (Node's fetch, browsers), still gets
// its 413: the server answers with `Connection: close` and reads the rest before hanging up, where closing
// at once made the client's send fail (EPIPE, ECONNRESET) before it read the answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/client.js';
import { createOrganisation } from '../../src/domains/accounts/service.js';
import { listen, type RunningServer } from '../../src/http/server.js';
import { openTestDatabase } from '../helpers/database.js';

let db: Database;
let server: RunningServer;
let key: string;

beforeAll(async () => {
  db = await openTestDatabase();
  key = (await createOrganisation(db.prisma, { name: 'Grande' })).api_key;
  const config = loadConfig({ NODE_ENV: 'test', HOST: '127.0.0.1', PORT: '0' });
  server = await listen(createApp(config, db), config);
});

afterAll(async () => {
  await server?.close();
  await db?.close();
});

const TWELVE_MB = new Uint8Array(12 * 1024 * 1024).fill(97);

async function send(path: string, body: BodyInit) {
  try {
    const response = await fetch(server.url + path, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body });
    return { status: response.status, connection: response.headers.get('connection'), body: await response.json() };
  } catch (e) {
    const cause = (e as { cause?: { code?: string } }).cause;
    return { status: 0, error: cause?.code ?? String(e) };
  }
}

describe('a body over 10 MB sent whole by fetch', () => {
  it('gets 413 ten times out of ten on /backend/uploads, with Connection: close', async () => {
    for (let i = 0; i < 10; i++) {
      const form = new FormData();
      form.append('file', new Blob([TWELVE_MB], { type: 'text/plain' }), 'big.txt');
      const r = await send('/backend/uploads', form);
      expect(r, `attempt ${i}`).toEqual({ status: 413, connection: 'close', body: { code: 'ERR_PAYLOAD_TOO_LARGE', message: expect.any(String) } });
    }
  });

  it('gets 413 ten times out of ten on /backend/knowledge', async () => {
    for (let i = 0; i < 10; i++) {
      const form = new FormData();
      form.append('name', 'grande');
      form.append('file', new Blob([TWELVE_MB], { type: 'text/plain' }), 'big.txt');
      const r = await send('/backend/knowledge', form);
      expect(r, `attempt ${i}`).toEqual({ status: 413, connection: 'close', body: { code: 'ERR_PAYLOAD_TOO_LARGE', message: expect.any(String) } });
    }
  });

  it('the server keeps serving afterwards', async () => {
    const r = await fetch(`${server.url}/backend/tags`, { headers: { authorization: `Bearer ${key}` } });
    expect(r.status).toBe(200);
  });
});
