// The database seen through Prisma, whatever runs it: transactions isolate under concurrency, the
// database's refusals keep their codes (the error mapping turns them into 409s), and statements answer
// right however often they are sent. On PGlite, which runs in a worker thread of its own with prepared
// statements (src/db/pglite-remote.ts, pglite-prepared.mjs), that is across the thread; and the thread
// ends on close, a crash fails requests at once instead of leaving them waiting, and an idle thread
// does not keep the process alive while a call under way does.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createApp } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/client.js';
import { STATEMENT_CACHE_SIZE } from '../../src/db/pglite-prepared.mjs';
import { EmbeddedDatabaseStopped, PGliteRemote } from '../../src/db/pglite-remote.js';
import { createOrganisation } from '../../src/domains/accounts/service.js';
import { AppError, constraintViolation, fromDatabaseError } from '../../src/errors.js';
import { PrismaClient } from '../../src/generated/prisma/client.js';
import { openTestDatabase } from '../helpers/database.js';
import { testDatabaseKind } from '../helpers/env.js';

/** Long enough never to expire on a loaded machine: what is tested is order, not speed. */
const SLOW_OK = { maxWait: 60_000, timeout: 60_000 };

const caught = async (promise: Promise<unknown>): Promise<any> =>
  promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e) => e,
  );

describe('transactions and errors through the driver adapter', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db?.close();
  });

  it('ten concurrent read-modify-write transactions under SELECT … FOR UPDATE lose no update', async () => {
    const tenant = await db.prisma.tenant.create({ data: { name: 'Counter' } });
    const increment = () =>
      db.prisma.$transaction(async (tx) => {
        const [{ n }] = await tx.$queryRaw<
          { n: number }[]
        >`SELECT deal_number_seq AS n FROM tenants WHERE id = ${tenant.id}::uuid FOR UPDATE`;
        // Other statements and a turn of the event loop between the read and the write: room for a
        // second transaction to interleave if isolation failed.
        await tx.$queryRaw`SELECT 1`;
        await new Promise((resolve) => setImmediate(resolve));
        await tx.tenant.update({ where: { id: tenant.id }, data: { deal_number_seq: n + 1 } });
      }, SLOW_OK);
    await Promise.all(Array.from({ length: 10 }, increment));
    expect((await db.prisma.tenant.findUniqueOrThrow({ where: { id: tenant.id } })).deal_number_seq).toBe(10);
  });

  it('a write is never seen outside its transaction before commit, nor after a rollback', async () => {
    const tenant = await db.prisma.tenant.create({ data: { name: 'Before' } });
    let written!: () => void;
    const wrote = new Promise<void>((resolve) => (written = resolve));
    const rolledBack = db.prisma.$transaction(async (tx) => {
      await tx.tenant.update({ where: { id: tenant.id }, data: { name: 'Uncommitted' } });
      written();
      // Keep the transaction open a few more statements while the read below is sent.
      for (let i = 0; i < 3; i++) await tx.$queryRaw`SELECT 1`;
      throw new Error('roll back');
    }, SLOW_OK);
    await wrote;
    // Sent while the transaction is open: PostgreSQL answers from the last commit, PGlite once the
    // transaction has ended; neither shows the uncommitted name.
    const outside = db.prisma.tenant.findUniqueOrThrow({ where: { id: tenant.id } });
    await expect(rolledBack).rejects.toThrow('roll back');
    expect((await outside).name).toBe('Before');
    expect((await db.prisma.tenant.findUniqueOrThrow({ where: { id: tenant.id } })).name).toBe('Before');
  });

  it('a unique violation arrives as one: SQLSTATE 23505, mapped to ALREADY_EXISTS (409)', async () => {
    const tenant = await db.prisma.tenant.create({ data: { name: 'Unique' } });
    const error = await caught(db.prisma.tenant.create({ data: { id: tenant.id, name: 'Again' } }));
    expect(constraintViolation(error)).toBe('unique');
    const mapped = fromDatabaseError(error);
    expect(mapped).toBeInstanceOf(AppError);
    expect(mapped).toMatchObject({ kind: 'ALREADY_EXISTS', status: 409 });
    // Raw SQL keeps the SQLSTATE on the error (the migrator and the CLI read it).
    const raw = await caught(db.sql.query('INSERT INTO tenants (id, name) VALUES ($1, $2)', [tenant.id, 'Raw']));
    expect(raw.code).toBe('23505');
  });

  it('a foreign key violation arrives as one: mapped to CONFLICT (409); the same inside a transaction, which is rolled back', async () => {
    const error = await caught(db.prisma.tag.create({ data: { tenant_id: randomUUID(), name: 'orphan', color: '#000000' } }));
    expect(constraintViolation(error)).toBe('foreign_key');
    expect(fromDatabaseError(error)).toMatchObject({ kind: 'CONFLICT', status: 409 });

    const tenant = await db.prisma.tenant.create({ data: { name: 'In a transaction' } });
    const inTx = await caught(
      db.prisma.$transaction(async (tx) => {
        await tx.tenant.update({ where: { id: tenant.id }, data: { name: 'Changed' } });
        await tx.tag.create({ data: { tenant_id: randomUUID(), name: 'orphan', color: '#000000' } });
      }, SLOW_OK),
    );
    expect(constraintViolation(inTx)).toBe('foreign_key');
    // Rolled back, and the connection serves the next statement.
    expect((await db.prisma.tenant.findUniqueOrThrow({ where: { id: tenant.id } })).name).toBe('In a transaction');
  });

  // PGlite prepares each statement once and keeps a bounded number (src/db/pglite-prepared.mjs).
  it(`more distinct statements than the cache keeps (${STATEMENT_CACHE_SIZE}) all answer, also when sent again`, async () => {
    const distinct = STATEMENT_CACHE_SIZE + 30;
    const sum = (k: number) => db.prisma.$queryRawUnsafe<{ n: number }[]>(`SELECT $1::int + ${k} AS n`, 1);
    for (let k = 0; k < distinct; k++) expect(await sum(k)).toEqual([{ n: k + 1 }]);
    // The first ones were closed to make room: prepared again.
    for (let k = 0; k < 5; k++) expect(await sum(k)).toEqual([{ n: k + 1 }]);
  });

  it('a statement sent before a table changed answers with the new columns after it', async () => {
    const table = `scratch_${randomUUID().replace(/-/g, '')}`;
    await db.sql.script(`CREATE TABLE ${table} (id int); INSERT INTO ${table} VALUES (1)`);
    const all = () => db.prisma.$queryRawUnsafe(`SELECT * FROM ${table} WHERE id = $1`, 1);
    expect(await all()).toEqual([{ id: 1 }]);
    await db.sql.script(`ALTER TABLE ${table} ADD COLUMN note text DEFAULT 'added'`);
    expect(await all()).toEqual([{ id: 1, note: 'added' }]);
    await db.sql.script(`DROP TABLE ${table}`);
  });
});

describe.skipIf(testDatabaseKind() !== 'pglite')('PGlite in its worker thread', () => {
  const template = () => {
    const file = inject('pgliteTemplate');
    return file && fs.existsSync(file) ? new Blob([fs.readFileSync(file)]) : undefined;
  };

  it('PGLITE_WORKER selects the thread: the worker by default, the main thread with false', async () => {
    expect(loadConfig({}).pgliteWorker).toBe(true);
    expect(loadConfig({ PGLITE_WORKER: 'false' }).pgliteWorker).toBe(false);
    expect(() => loadConfig({ PGLITE_WORKER: 'sometimes' })).toThrow(ConfigError);
    const onMain = await openDatabase({ pgliteTemplate: template(), pgliteWorker: false });
    try {
      expect(await onMain.sql.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      expect(await onMain.prisma.tenant.count()).toBeGreaterThanOrEqual(0);
    } finally {
      await onMain.close();
    }
  });

  it('close ends the thread; a call afterwards fails at once', async () => {
    const remote = await PGliteRemote.start({ template: template() });
    expect(await remote.sql.query('SELECT 2 AS two')).toEqual([{ two: 2 }]);
    await remote.close();
    expect(remote.thread.threadId).toBe(-1); // the thread has exited
    const after = await caught(remote.sql.query('SELECT 1'));
    expect(after).toBeInstanceOf(EmbeddedDatabaseStopped);
    expect(after.message).toMatch(/it was closed/);
  });

  it('a crash of the thread fails the calls under way and every later one, and requests answer 500 / 503', async () => {
    const remote = await PGliteRemote.start({ template: template() });
    const prisma = new PrismaClient({ adapter: remote.adapterFactory() });
    const db: Database = {
      kind: 'pglite',
      prisma,
      oneSnapshot: true,
      sql: remote.sql,
      listen: (c, f) => remote.listen(c, f),
      close: () => remote.close(),
    };
    const app = createApp(loadConfig({ NODE_ENV: 'test' }), db);
    try {
      const org = await createOrganisation(prisma, { name: 'Crash' });
      const request = (path: string) =>
        app.fetch(new Request(`http://funil.test${path}`, { headers: { authorization: `Bearer ${org.api_key}` } }));
      expect((await request('/backend/tags')).status).toBe(200);

      // A transaction holds the connection; a request waits behind it in the thread's queue.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let opened!: () => void;
      const isOpen = new Promise<void>((resolve) => (opened = resolve));
      const transaction = prisma.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT 1`;
        opened();
        await held;
        await tx.$queryRaw`SELECT 2`;
      }, SLOW_OK);
      await isOpen;
      const waiting = request('/backend/tags');

      await remote.thread.terminate(); // as if the thread had died
      release();
      await expect(transaction).rejects.toThrow(/embedded database is not available: its thread exited/);
      const answer = await waiting;
      expect(answer.status).toBe(500);
      expect(await answer.json()).toMatchObject({ success: false, error: { code: 'INTERNAL_ERROR' } });

      // Later calls fail at once, the same way.
      expect((await request('/backend/tags')).status).toBe(500);
      const ready = await app.fetch(new Request('http://funil.test/ready'));
      expect(ready.status).toBe(503);
      expect(await ready.json()).toEqual({ status: 'unavailable' });
      await expect(prisma.tenant.count()).rejects.toThrow(/embedded database is not available: its thread exited/);
    } finally {
      await prisma.$disconnect();
      await remote.close();
    }
  });

  it('an idle thread does not keep the process alive; a call under way does', () => {
    // No close and nothing else to wait for: the process prints the answer and then ends by itself.
    const script = `
      import { openDatabase } from './src/db/client.ts';
      const db = await openDatabase({});
      const [row] = await db.sql.query("SELECT 'answered' AS word, pg_sleep(0.2) IS NULL AS slept");
      console.log(row.word);
    `;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 90_000,
    });
    expect(run.signal, run.stderr).toBeNull(); // not killed by the timeout
    expect(run.stdout.trim()).toBe('answered');
    expect(run.status).toBe(0);
  });
});
