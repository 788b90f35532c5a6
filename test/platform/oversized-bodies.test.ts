// A body over the limit sent whole, without `Expect: 100-continue` (Node's fetch, browsers), still gets
// its 413: the server answers with `Connection: close` and reads the rest before hanging up, where closing
// at once made the client's send fail (EPIPE, ECONNRESET) before it read the answer.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
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

/** Ten 12 MB bodies sent by Node's fetch from another process (in this one, the client shares the
 * server's event loop, which hides the reset): what each got. */
function sendFromAnotherProcess(path: string): Promise<unknown[]> {
  const client = fileURLToPath(new URL('./oversized-client.mjs', import.meta.url));
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [client, server.url, key, path, '12', '10'], { timeout: 100_000 }, (error, stdout) => {
      if (error) reject(new Error(error.message));
      else
        resolve(
          stdout
            .trim()
            .split('\n')
            .map((line) => JSON.parse(line)),
        );
    });
  });
}

const REFUSED = { status: 413, connection: 'close', body: { code: 'ERR_PAYLOAD_TOO_LARGE', message: expect.any(String) } };

describe('a body over 10 MB sent whole by fetch', () => {
  it('gets 413 ten times out of ten on /backend/uploads, with Connection: close', { timeout: 120_000 }, async () => {
    expect(await sendFromAnotherProcess('/backend/uploads')).toEqual(Array(10).fill(REFUSED));
  });

  it('gets 413 ten times out of ten on /backend/knowledge', { timeout: 120_000 }, async () => {
    expect(await sendFromAnotherProcess('/backend/knowledge')).toEqual(Array(10).fill(REFUSED));
  });

  it('the server keeps serving afterwards', async () => {
    const r = await fetch(`${server.url}/backend/tags`, { headers: { authorization: `Bearer ${key}` } });
    expect(r.status).toBe(200);
  });
});
