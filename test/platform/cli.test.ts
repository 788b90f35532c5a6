// `npm run cli -- …`: the admin tasks while the server is stopped, against the configured database. The
// commands run in this process (runCli), one after another; the process itself (its output, its exit
// code) is checked by the first and the last test.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migratedDataDir } from '../helpers/database.js';
import { POSTGRES_URL, testDatabaseKind } from '../helpers/env.js';
import { hashApiKey } from '../../src/auth/keys.js';
import { runCli } from '../../src/cli.js';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';

const run = promisify(execFile);
const schema = `funil_test_${Math.floor(Date.now() / 1000)}_cli${randomBytes(3).toString('hex')}`;
const env: Record<string, string> =
  testDatabaseKind() === 'postgres' ? { DATABASE_URL: `${POSTGRES_URL}?schema=${schema}` } : { DATA_DIR: migratedDataDir('funil-cli-') };

/** The command in a CLI process of its own: its standard output. */
async function cliProcess(...args: string[]) {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { env: { ...process.env, ...env } });
  return stdout;
}

/** The command in this process: what it prints, or the Error the CLI would print before exiting with 1. */
async function cli(...args: string[]) {
  const printed: string[] = [];
  await runCli(args, { env: { ...process.env, ...env }, print: (text) => printed.push(text) });
  return printed.map((text) => `${text}\n`).join('');
}

afterAll(async () => {
  if (testDatabaseKind() !== 'postgres') return;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
});

describe('admin CLI', () => {
  it('creates an organisation and keys, lists them without secrets, revokes', { timeout: 240_000 }, async () => {
    const created = JSON.parse(await cliProcess('create-tenant', '--name', 'Acme', '--owner-email', 'ana@acme.test'));
    expect(created).toEqual({
      tenant: { id: expect.any(String), name: 'Acme', created_at: expect.any(String) },
      user: { id: expect.any(String), name: 'Owner', email: 'ana@acme.test', role: 'owner' },
      api_key: expect.stringMatching(/^fnl_/),
    });
    const key = JSON.parse(await cli('create-key', '--tenant', created.tenant.id, '--name', 'ci', '--permissions', 'pipeline.view'));
    expect(key).toMatchObject({ id: expect.any(String), key: expect.stringMatching(/^fnl_/), user_id: created.user.id });
    const listOut = await cli('list-keys', '--tenant', created.tenant.id);
    const listed = JSON.parse(listOut);
    expect(listed.map((k: any) => k.name).sort()).toEqual(['Owner key', 'ci']);
    expect(listOut).not.toContain(key.key);
    expect(listOut).not.toContain(hashApiKey(key.key));
    expect(await cli('revoke-key', '--id', key.id)).toContain('revoked');
    expect(JSON.parse(await cli('list-keys', '--tenant', created.tenant.id)).find((k: any) => k.id === key.id).revoked_at).not.toBeNull();
  });

  // On PGlite the commands must not overlap: each opens the data directory.
  it('creates, revokes and deletes keys through the account services, with their checks', { timeout: 240_000 }, async () => {
    const acme = JSON.parse(await cli('create-tenant', '--name', 'Acme'));
    const other = JSON.parse(await cli('create-tenant', '--name', 'Other'));
    const refused = async (args: string[], message: string) =>
      expect(cli('create-key', '--tenant', acme.tenant.id, ...args)).rejects.toThrow(message);
    await refused(['--permissions', 'pipeline.view,pipeline.everything'], 'Permissões desconhecidas: pipeline.everything');
    await refused(['--expires-at', '2020-01-01T00:00:00Z'], 'expires_at deve estar no futuro');
    await refused(['--user', other.user.id], 'Usuário não encontrado');

    const key = JSON.parse(await cli('create-key', '--tenant', acme.tenant.id, '--expires-at', '2999-01-01T00:00:00Z'));
    expect(key).toEqual({
      id: expect.any(String),
      key: expect.stringMatching(/^fnl_/),
      prefix: key.key.slice(0, 10),
      user_id: acme.user.id,
    });
    // Revoking twice keeps the first revocation time, as the API does.
    await cli('revoke-key', '--id', key.id);
    const afterFirst = Date.now();
    expect(await cli('revoke-key', '--id', key.id)).toContain('revoked');
    const listed = JSON.parse(await cli('list-keys', '--tenant', acme.tenant.id));
    expect(listed.map((k: any) => k.name).sort()).toEqual(['CLI key', 'Owner key']); // nothing from the refused ones
    expect(new Date(listed.find((k: any) => k.id === key.id).revoked_at).getTime()).toBeLessThanOrEqual(afterFirst);
    expect(await cli('delete-key', '--id', key.id)).toContain('deleted');
    await expect(cli('delete-key', '--id', key.id)).rejects.toThrow('No such key');
  });

  it('makes a SECRETS_KEY and reseals the stored secrets with the current key', async () => {
    const key = (await cli('keygen', '--secrets')).trim();
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await cli('reseal-secrets')).toMatch(/^sealed with the current key: \d+ webhook\(s\), \d+ channel\(s\)\n$/);
  });

  it('seeds a sample organisation whose board, conversations and knowledge a newcomer can query', { timeout: 240_000 }, async () => {
    const printed = JSON.parse(await cli('seed-demo', '--name', 'Demo CLI'));
    expect(printed).toMatchObject({ tenant: { name: 'Demo CLI' }, api_key: expect.stringMatching(/^fnl_/) });
    // The suggested query, on an app over the same database.
    const config = loadConfig({ ...process.env, ...env });
    const db = await openDatabase({ databaseUrl: config.databaseUrl, pgliteDir: path.join(config.dataDir, 'db'), migrate: false });
    const app = createApp(config, db);
    try {
      const gql = async (query: string) => {
        const r = await app.fetch(
          new Request('http://cli.test/graphql', {
            method: 'POST',
            headers: { authorization: `Bearer ${printed.api_key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ query }),
          }),
        );
        return (await r.json()) as { data: any; errors?: unknown };
      };
      const board = await gql(printed.try_in_graphiql);
      expect(board.errors).toBeUndefined();
      const stages = board.data.pipelineBoard.stages as { deal_count: number; stage: { name: string; deals: { nodes: unknown[] } } }[];
      expect(stages.map((s) => [s.stage.name, s.deal_count, s.stage.deals.nodes.length])).toEqual([
        ['Entrada', 3, 3],
        ['Em andamento', 3, 3],
        ['Ganho', 1, 1],
        ['Perdido', 1, 1],
      ]);
      const rest = await gql(
        '{ leads { pagination { total } } conversations { data { unread_count last_message { role } } } knowledgeItems { name } }',
      );
      expect(rest.errors).toBeUndefined();
      expect(rest.data.leads.pagination.total).toBe(8);
      expect(rest.data.conversations.data).toHaveLength(3);
      expect(rest.data.knowledgeItems).toEqual([{ name: 'Horário e entregas' }]);
    } finally {
      app.close();
      await db.close();
    }
  });

  it('explains a missing option and exits non-zero', async () => {
    await expect(cliProcess('create-key')).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('--tenant is required') });
  });
});
