// `npm run cli -- backup FILE` / `restore FILE`: an embedded database with a row in every table and a
// stored file, backed up, restored into a fresh DATA_DIR and started there, holds the same rows and
// bytes. A backup of a data directory in use is refused; a restore goes only into an empty DATA_DIR.
// With PostgreSQL (DATABASE_URL) both commands refuse and point to pg_dump.
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { BackupError, restore } from '../../src/db/backup.js';
import { openDatabase, type Database } from '../../src/db/client.js';
import { ADMIN_TOKEN, TestClient, type Org } from '../helpers/app.js';
import { migratedDataDir } from '../helpers/database.js';
import { POSTGRES_URL, testDatabaseKind } from '../helpers/env.js';
import { makeDeal, makeLead, makePipeline, makeProduct, makeStatus, makeTag } from '../helpers/factories.js';
import { spawnServer } from '../helpers/server-process.js';
import { makeAssistant, makeItem } from '../knowledge/helpers.js';
import { addMember, inbound, makeChannel, makeDepartment, makeUser, nextMobile } from '../messaging/helpers.js';
import { makeAssociation, makeCadence, providerTemplate, syncTemplates } from '../templates/helpers.js';
import { keyOf, PNG, upload } from '../uploads/helpers.js';

const run = promisify(execFile);
const temp: string[] = [];
const tempDir = (prefix: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  temp.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of temp) fs.rmSync(dir, { recursive: true, force: true });
});

/** `npm run cli -- …` with this environment; resolves with the exit code and output whatever the code. */
async function cli(env: Record<string, string>, ...args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { env: { ...process.env, ...env } });
    return { code: 0, out: stdout + stderr };
  } catch (e) {
    const failed = e as { code: number; stdout: string; stderr: string };
    return { code: failed.code, out: failed.stdout + failed.stderr };
  }
}

/** Every table of the database, each as its rows in JSON text, sorted. */
async function snapshot(db: Database): Promise<Record<string, string[]>> {
  const tables = await db.sql.query<{ name: string }>(
    `SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1`,
  );
  const rows: Record<string, string[]> = {};
  for (const { name } of tables) {
    rows[name] = (await db.sql.query<{ row: string }>(`SELECT to_jsonb(t)::text AS row FROM "${name}" t ORDER BY 1`)).map((r) => r.row);
  }
  return rows;
}

/** A row in every table, through the API (and the one row the API makes only in a background job). */
async function richFixture(api: TestClient): Promise<{ org: Org; fileUrl: string; bytes: Uint8Array<ArrayBuffer> }> {
  const org = await api.newOrg('Backup');
  const ok = (r: { status: number; body: unknown }, status = 200) => expect(r.status, JSON.stringify(r.body)).toBe(status);

  const status = await makeStatus(api, org);
  const tag = await makeTag(api, org, 'VIP');
  const lead = await makeLead(api, org, { name: 'Ana', company: 'Acme' });
  ok(await api.rest('PUT', `/backend/leads/${lead.id}`, { key: org.key, body: { status_id: status.id, tag_ids: [tag.id] } }));
  const pipeline = await makePipeline(api, org);
  const product = await makeProduct(api, org, 'Consultoria', 750);
  const deal = await makeDeal(api, org, {
    pipeline_id: pipeline.id,
    stage_id: pipeline.stages[0].id,
    lead_id: lead.id,
    products: [{ product_id: product.id, qty: 2 }],
    tag_ids: [tag.id],
  });
  // With an Idempotency-Key: its record (idempotency_keys) is backed up like any other row.
  ok(
    await api.rest('POST', `/backend/pipeline/deals/${deal.id}/activities`, {
      key: org.key,
      body: { title: 'Ligar' },
      headers: { 'idempotency-key': 'backup-activity-1' },
    }),
    201,
  );

  const hook = await api.rest('POST', '/backend/webhooks', {
    key: org.key,
    body: { url: 'http://127.0.0.1:9/hook', events: ['deal.created'] },
  });
  ok(hook, 201);
  // A delivery attempt is written by the job runner, which this in-process app does not run.
  const event = await api.db.prisma.event.findFirstOrThrow({ where: { tenant_id: org.tenantId } });
  await api.db.prisma.webhookDelivery.create({
    data: {
      tenant_id: org.tenantId,
      webhook_id: hook.body.data.id,
      event_id: event.id,
      event_type: event.type,
      attempt: 1,
      status: 'failed',
      error: 'refused',
      duration_ms: 3,
    },
  });

  const [template] = await syncTemplates(api, org, [providerTemplate('boas_vindas')]);
  const cadence = await makeCadence(api, org);
  await makeAssociation(api, org, { cadence_id: cadence.id, template_id: template.id, parameter_mapping: { '1': 'lead.name' } });
  ok(await api.rest('PUT', `/backend/cadences/${cadence.id}`, { key: org.key, body: { steps: [{ delay_seconds: 3_600 }] } }));
  const enrolled = await api.rest('POST', `/backend/cadences/${cadence.id}/enrolments`, { key: org.key, body: { lead_ids: [lead.id] } });
  ok(enrolled);
  // A step's send is written by the job runner, which this in-process app does not run.
  await api.db.prisma.cadenceSend.create({
    data: { tenant_id: org.tenantId, enrolment_id: enrolled.body.enrolled[0].id, step: 0, message_index: 0, message_id: randomUUID() },
  });

  const assistant = await makeAssistant(api, org);
  const item = await makeItem(api, org, { name: 'Horários', content: 'Abrimos às 9h.' });
  ok(await api.rest('POST', `/backend/knowledge/${item.id}/exclusions/${assistant.id}`, { key: org.key }));

  // A stored file: a PNG with random bytes after it, so that any change to its bytes shows.
  const bytes = new Uint8Array(Buffer.concat([PNG, randomBytes(200_000)]));
  const stored = await upload(api, org.key, { bytes, name: 'vitrine.png', type: 'image/png' });

  const department = await makeDepartment(api, org, 'Vendas');
  const operator = await makeUser(api, org, 'operator');
  await addMember(api, org, department.id, operator.id);
  const channel = await makeChannel(api, org, { department_id: department.id });
  await inbound(api, org, channel.id, nextMobile(), 'Olá, quero um orçamento');
  return { org, fileUrl: stored.file_url, bytes };
}

describe.runIf(testDatabaseKind() === 'pglite')('backup and restore of the embedded database', () => {
  it(
    'round trip: every table and a stored file, backed up, restored into a fresh DATA_DIR and started there, are equal',
    { timeout: 300_000 },
    async () => {
      const source = migratedDataDir('funil-backup-source-');
      temp.push(source);
      const config = loadConfig({
        NODE_ENV: 'test',
        ADMIN_TOKEN,
        PUBLIC_BASE_URL: 'http://funil.test',
        DATA_DIR: source,
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      });
      const db = await openDatabase({ pgliteDir: path.join(source, 'db') });
      let before: Record<string, string[]>;
      let fixture: Awaited<ReturnType<typeof richFixture>>;
      try {
        fixture = await richFixture(new TestClient(createApp(config, db), db, config));
        before = await snapshot(db);
      } finally {
        await db.close();
      }
      const empty = Object.keys(before).filter((t) => before[t].length === 0);
      expect(empty, `tables with no row in the fixture (add them to richFixture): ${empty.join(', ')}`).toEqual([]);

      const file = path.join(tempDir('funil-backup-file-'), 'funil.tar.gz');
      const backedUp = await cli({ DATA_DIR: source }, 'backup', file);
      expect(backedUp, backedUp.out).toMatchObject({ code: 0 });
      expect(backedUp.out).toMatch(/Backed up the embedded database \(\d+ migrations applied\) and 1 stored file\(s\) to /);

      const target = path.join(tempDir('funil-backup-target-'), 'data'); // does not exist yet
      const restored = await cli({ DATA_DIR: target }, 'restore', file);
      expect(restored, restored.out).toMatchObject({ code: 0 });
      expect(restored.out).toContain(`into ${target}`);

      // Started on the restored directory (no job runner: it would deliver the pending event and add rows).
      const server = await spawnServer({ DATA_DIR: target, WORKERS: 'false', PUBLIC_BASE_URL: 'http://funil.test' });
      try {
        await server.listening;
        const media = await fetch(`http://127.0.0.1:${server.port}/media/proxy/${keyOf(fixture.fileUrl)}`);
        expect(media.status).toBe(200);
        expect(Buffer.from(await media.arrayBuffer()).equals(Buffer.from(fixture.bytes))).toBe(true);
        const leads = await fetch(`http://127.0.0.1:${server.port}/backend/leads`, {
          headers: { authorization: `Bearer ${fixture.org.key}` },
        });
        expect(leads.status).toBe(200);
        expect((await leads.json()).data.map((l: { name: string }) => l.name)).toContain('Ana');
        // The server holds the directory: a backup now is refused, naming it.
        const busy = await cli({ DATA_DIR: target }, 'backup', path.join(path.dirname(file), 'busy.tar.gz'));
        expect(busy.code).toBe(1);
        expect(busy.out).toContain(`The data directory ${path.join(target, 'db')} is in use by process ${server.proc.pid}`);
        expect(fs.existsSync(path.join(path.dirname(file), 'busy.tar.gz'))).toBe(false);
      } finally {
        server.proc.kill('SIGTERM');
        expect(await server.exited).toBe(0);
      }

      // What the start and the request above changed: the start queued its hourly uploads and idempotency
      // cleanups and the embedded database's vacuum, and the key's last_used_at moved. Everything else is
      // as it was backed up.
      const reopened = await openDatabase({ pgliteDir: path.join(target, 'db') });
      let after: Record<string, string[]>;
      try {
        after = await snapshot(reopened);
      } finally {
        await reopened.close();
      }
      const strip = (rows: string[]) => rows.map((r) => JSON.stringify({ ...JSON.parse(r), last_used_at: null }));
      const queues = ['uploads.cleanup', 'idempotency.cleanup', 'database.vacuum'];
      const cleanup = (row: string) => queues.includes(JSON.parse(row).queue);
      expect(
        after.jobs
          .filter(cleanup)
          .map((row) => JSON.parse(row).queue)
          .sort(),
      ).toEqual([...queues].sort());
      after.jobs = after.jobs.filter((row) => !cleanup(row));
      for (const table of Object.keys(before)) {
        const [a, b] = table === 'api_keys' ? [strip(before[table]), strip(after[table])] : [before[table], after[table]];
        expect(b, `table ${table}`).toEqual(a);
      }
      expect(Object.keys(after)).toEqual(Object.keys(before));
      const storedPath = path.join(
        config.storageDir,
        keyOf(fixture.fileUrl).slice(0, 2),
        keyOf(fixture.fileUrl).slice(2, 4),
        keyOf(fixture.fileUrl),
      );
      const restoredPath = storedPath.replace(source, target);
      expect(fs.readFileSync(restoredPath).equals(fs.readFileSync(storedPath))).toBe(true);

      // Never over data: the target now holds a database, and the source always did.
      for (const dataDir of [target, source]) {
        const refused = await restore({ dataDir, dbDir: path.join(dataDir, 'db'), storageDir: path.join(dataDir, 'files') }, file).catch(
          (e) => e,
        );
        expect(refused).toBeInstanceOf(BackupError);
        expect(refused.message).toBe(
          `DATA_DIR ${dataDir} is not empty. A restore goes only into an empty directory: point DATA_DIR at a new one (or move this one away) and run the restore again.`,
        );
      }
    },
  );

  it('refuses a file that is not a backup, and leaves the empty DATA_DIR empty', async () => {
    const dataDir = tempDir('funil-restore-');
    const notBackup = path.join(dataDir, '..', `${path.basename(dataDir)}.tar.gz`);
    temp.push(notBackup);
    fs.writeFileSync(notBackup, 'not a tar');
    const where = { dataDir, dbDir: path.join(dataDir, 'db'), storageDir: path.join(dataDir, 'files') };
    await expect(restore(where, notBackup)).rejects.toThrow(/is not a Funil backup/);
    await expect(restore(where, path.join(dataDir, 'missing.tar.gz'))).rejects.toThrow('No such file');
    expect(fs.readdirSync(dataDir)).toEqual([]);
  });
});

describe.runIf(testDatabaseKind() === 'postgres')('backup and restore with PostgreSQL', () => {
  it('refuse, pointing to pg_dump and the files directory', async () => {
    const env = { DATABASE_URL: `${POSTGRES_URL}?schema=funil_backup_never_created`, STORAGE_DIR: '/srv/funil-files' };
    for (const command of ['backup', 'restore']) {
      const r = await cli(env, command, '/tmp/never-written.tar.gz');
      expect(r.code).toBe(1);
      expect(r.out).toContain(
        `DATABASE_URL is set: ${command} is for the embedded database. With PostgreSQL use pg_dump / pg_restore, and copy STORAGE_DIR (/srv/funil-files)`,
      );
    }
    expect(fs.existsSync('/tmp/never-written.tar.gz')).toBe(false);
  });
});
