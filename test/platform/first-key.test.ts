// The first start on an empty database in production: the generated Owner key goes to
// DATA_DIR/first-api-key, readable by the server's user alone, and is never printed; the key works.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { bootstrapAtStart, FIRST_KEY_FILE } from '../../src/domains/accounts/start.js';
import { createStorage } from '../../src/storage/create.js';
import { openTestDatabase } from '../helpers/database.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'funil-first-key-'));
const db = await openTestDatabase();
afterAll(async () => {
  await db.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('the first key in production', () => {
  it('is written to a file only the server’s user can read, not to the output, and authenticates', async () => {
    const config = loadConfig({
      NODE_ENV: 'production',
      DATA_DIR: dataDir,
      REQUIRE_HTTPS: 'false',
      SECRETS_KEY: 'first-key-test-secrets-key-0123456789',
    });
    const printed = vi.spyOn(console, 'log');
    try {
      await bootstrapAtStart({ db, config, storage: createStorage(config) });
    } finally {
      printed.mockRestore();
    }
    const file = path.join(dataDir, FIRST_KEY_FILE);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const key = fs.readFileSync(file, 'utf8').trim();
    expect(key).toMatch(/^fnl_/);
    expect(printed.mock.calls.flat().join(' ')).not.toContain(key);
    const me = await createApp(config, db).fetch(
      new Request('http://funil.test/backend/me', { headers: { authorization: `Bearer ${key}` } }),
    );
    expect(me.status).toBe(200);
    expect(((await me.json()) as { data: { user: { role: string } } }).data.user.role).toBe('owner');
  });
});
