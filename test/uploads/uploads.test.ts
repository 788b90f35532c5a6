// Uploads over REST with real multipart bodies: the record (name without extension, type from the
// content, size, status, file_url), every refusal (400 with nothing left on disk or in the database),
// reads, status, delete, cleanup, tenant isolation and permissions.
import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupExpiredUploads } from '../../src/domains/uploads/service.js';
import type { Org } from '../helpers/app.js';
import { ageUpload, keyOf, KEY_URL, PNG, upload, uploadForm, useUploadApp, wav } from './helpers.js';

const { api, root, store } = useUploadApp();
let org: Org;
let operator: string;
beforeAll(async () => {
  org = await api.newOrg('Loja');
  operator = await api.keyFor(org, 'operator');
});

/** The media proxy's status for a file_url (the body is read, so the file is closed). */
async function proxyStatus(fileUrl: string) {
  const res = await api.raw(new URL(fileUrl).pathname);
  await res.arrayBuffer();
  return res.status;
}

const recordCount = () => api.db.prisma.upload.count();

/** Runs `fn` and checks it left storage and the uploads table exactly as they were. */
async function leavesNothing(fn: () => Promise<unknown>) {
  const files = await store.contents();
  const records = await recordCount();
  await fn();
  expect(await store.contents()).toEqual(files);
  expect(await recordCount()).toBe(records);
}

describe('POST /backend/uploads', () => {
  it('stores the file and answers 200 with the PENDING upload; the record and the read agree', async () => {
    const r = await api.rest('POST', '/backend/uploads', {
      key: operator,
      body: uploadForm({ bytes: PNG, name: 'foto da loja.png', type: 'image/png' }, { folder: 'produtos/vitrine' }),
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      id: expect.any(String),
      tenant_id: org.tenantId,
      filename: 'foto da loja',
      file_type: 'media',
      file_url: expect.stringMatching(KEY_URL),
      mime_type: 'image/png',
      size: PNG.byteLength,
      status: 'PENDING',
      folder: 'produtos/vitrine',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const key = keyOf(r.body.file_url);
    expect((await store.read(key))!).toEqual(Buffer.from(PNG));
    // The proxy path is the key alone: nothing of the tenant, the name or the folder.
    expect(r.body.file_url).not.toContain(org.tenantId);
    const read = await api.rest('GET', `/backend/uploads/${r.body.id}`, { key: operator });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(r.body);
    expect(Date.parse(read.body.updated_at)).toBeGreaterThan(0);
  });

  it('judges the type by the content, not by the name or the declared type', async () => {
    const disguised = await upload(api, operator, { bytes: PNG, name: 'documento.pdf', type: 'application/pdf' });
    expect(disguised).toMatchObject({ filename: 'documento', mime_type: 'image/png' });
    const html = await upload(api, operator, {
      bytes: new TextEncoder().encode('<!DOCTYPE html><script>alert(1)</script>'),
      name: 'foto.jpg',
      type: 'image/jpeg',
    });
    expect(html.mime_type).toBe('text/html');
    // Bytes that say nothing: the declaration counts, unless it names a type a browser would run.
    const opaque = new Uint8Array([0, 1, 2, 3, 250, 251, 252]);
    expect((await upload(api, operator, { bytes: opaque, name: 'dados.xyz', type: 'application/x-funil-dados' })).mime_type).toBe(
      'application/x-funil-dados',
    );
    expect((await upload(api, operator, { bytes: opaque, name: 'pagina.html', type: 'text/html' })).mime_type).toBe(
      'application/octet-stream',
    );
    expect((await upload(api, operator, { bytes: opaque, name: 'x.svg', type: 'image/svg+xml' })).mime_type).toBe(
      'application/octet-stream',
    );
    expect((await upload(api, operator, { bytes: opaque, name: 'x.bin', type: 'not a type' })).mime_type).toBe('application/octet-stream');
    expect((await upload(api, operator, { bytes: opaque, name: 'x.txt', type: 'text/plain' })).mime_type).toBe('application/octet-stream');
    expect(
      (await upload(api, operator, { bytes: new TextEncoder().encode('olá, mundo'), name: 'x.bin', type: 'application/x-funil-dados' }))
        .mime_type,
    ).toBe('text/plain');
  });

  it('stores the name without its extension and without any path', async () => {
    expect((await upload(api, operator, { bytes: PNG, name: 'relatório.final.png' })).filename).toBe('relatório.final');
    expect((await upload(api, operator, { bytes: PNG, name: 'sem-extensao' })).filename).toBe('sem-extensao');
    expect((await upload(api, operator, { bytes: PNG, name: '.oculto' })).filename).toBe('.oculto');
    expect((await upload(api, operator, { bytes: PNG, name: '../../etc/passwd.png' })).filename).toBe('passwd');
  });

  it('takes type audio for audio content and refuses it for anything else', async () => {
    const audio = await upload(api, operator, { bytes: wav(), name: 'recado.wav', type: 'audio/wav' }, { type: 'audio' });
    expect(audio).toMatchObject({ file_type: 'audio', mime_type: 'audio/wav', filename: 'recado' });
    await leavesNothing(async () => {
      const r = await api.rest('POST', '/backend/uploads', {
        key: operator,
        body: uploadForm({ bytes: PNG, name: 'recado.wav', type: 'audio/wav' }, { type: 'audio' }),
      });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('ERR_INVALID_INPUT');
    });
  });

  it('refuses a missing file, an invalid type or folder and a form that is not multipart with 400, leaving nothing behind', async () => {
    const cases: [string, FormData | Record<string, unknown>][] = [
      ['no file', uploadForm(null, { type: 'media' })],
      [
        'an empty file input',
        (() => {
          const f = new FormData();
          f.append('file', new Blob([]), '');
          return f;
        })(),
      ],
      ['type video', uploadForm({ bytes: PNG, name: 'a.png' }, { type: 'video' })],
      ['type empty', uploadForm({ bytes: PNG, name: 'a.png' }, { type: '' })],
      ['type MEDIA', uploadForm({ bytes: PNG, name: 'a.png' }, { type: 'MEDIA' })],
      ['folder ..', uploadForm({ bytes: PNG, name: 'a.png' }, { folder: '../fora' })],
      ['folder absolute', uploadForm({ bytes: PNG, name: 'a.png' }, { folder: '/etc' })],
      ['folder with a backslash', uploadForm({ bytes: PNG, name: 'a.png' }, { folder: 'a\\b' })],
      ['folder with a dot segment', uploadForm({ bytes: PNG, name: 'a.png' }, { folder: 'a/./b' })],
      ['folder with spaces', uploadForm({ bytes: PNG, name: 'a.png' }, { folder: 'minha pasta' })],
      ['folder too long', uploadForm({ bytes: PNG, name: 'a.png' }, { folder: 'a'.repeat(101) })],
      ['a name with control characters', uploadForm({ bytes: PNG, name: 'a\u0007b.png' })],
      ['a name over 255 characters', uploadForm({ bytes: PNG, name: `${'n'.repeat(256)}.png` })],
      ['JSON', { file: 'x', type: 'media' }],
    ];
    await leavesNothing(async () => {
      for (const [name, body] of cases) {
        const r = await api.rest('POST', '/backend/uploads', { key: operator, body });
        expect(r.status, name).toBe(400);
        expect(r.body.code, name).toBe('ERR_INVALID_INPUT');
        expect(r.body.message, name).toEqual(expect.any(String));
      }
    });
    // The largest folder accepted, and an empty one (a blank form field) as none.
    expect((await upload(api, operator, { bytes: PNG }, { folder: 'a'.repeat(100) })).folder).toBe('a'.repeat(100));
    expect((await upload(api, operator, { bytes: PNG }, { folder: '' })).folder).toBeNull();
  });

  it('removes the stored file when the record cannot be written', async () => {
    // A trigger makes the insert fail after the file is in storage.
    await api.db.prisma.$executeRawUnsafe(
      `CREATE FUNCTION uploads_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$`,
    );
    await api.db.prisma.$executeRawUnsafe(
      `CREATE TRIGGER uploads_test_refuse BEFORE INSERT ON uploads FOR EACH ROW WHEN (NEW.filename = 'recusar') EXECUTE FUNCTION uploads_test_refuse()`,
    );
    try {
      await leavesNothing(async () => {
        const r = await api.rest('POST', '/backend/uploads', { key: operator, body: uploadForm({ bytes: PNG, name: 'recusar.png' }) });
        expect(r.status).toBe(500);
        expect(r.body).toEqual({ code: 'ERR_INTERNAL', message: expect.any(String) });
      });
    } finally {
      await api.db.prisma.$executeRawUnsafe('DROP TRIGGER uploads_test_refuse ON uploads');
      await api.db.prisma.$executeRawUnsafe('DROP FUNCTION uploads_test_refuse()');
    }
  });

  it('refuses a caller without a key before storing anything', async () => {
    await leavesNothing(async () => {
      const r = await api.rest('POST', '/backend/uploads', { body: uploadForm({ bytes: PNG }) });
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe('UNAUTHORIZED');
    });
  });
});

describe('reading, status and delete', () => {
  it('lists the organisation’s uploads in creation order, in a constant number of statements', async () => {
    const other = await api.newOrg('Lista');
    const first = await upload(api, other.key);
    const second = await upload(api, other.key, { bytes: wav(), name: 'b.wav' }, { type: 'audio' });
    const r = await api.rest('GET', `/backend/uploads/tenant/${other.tenantId}`, { key: other.key });
    expect(r.status).toBe(200);
    expect(r.body.map((u: { id: string }) => u.id)).toEqual([first.id, second.id]);
    expect(r.body[1]).toEqual(second);
    for (let i = 0; i < 3; i++) await upload(api, other.key);
    const statements = await api.countStatements(() => api.rest('GET', `/backend/uploads/tenant/${other.tenantId}`, { key: other.key }));
    expect(statements).toBeLessThanOrEqual(3); // the key lookup and the list
  });

  it('answers 404 for another organisation’s list and 400 for a malformed id', async () => {
    const other = await api.newOrg('Outra');
    // The organisation's listing needs uploads.manage: the owner's key.
    expect((await api.rest('GET', `/backend/uploads/tenant/${other.tenantId}`, { key: org.key })).status).toBe(404);
    expect((await api.rest('GET', `/backend/uploads/tenant/${randomUUID()}`, { key: org.key })).body.code).toBe('ERR_NOT_FOUND');
    expect((await api.rest('GET', '/backend/uploads/tenant/nao-e-uuid', { key: org.key })).body.code).toBe('ERR_INVALID_INPUT');
    expect((await api.rest('GET', '/backend/uploads/nao-e-uuid', { key: operator })).status).toBe(400);
    expect((await api.rest('GET', `/backend/uploads/${randomUUID()}`, { key: operator })).body.code).toBe('ERR_NOT_FOUND');
  });

  it('sets the status to ASSOCIATED and back; refuses other values', async () => {
    const u = await upload(api, operator);
    const associated = await api.rest('PUT', `/backend/uploads/${u.id}/status`, { key: operator, body: { status: 'ASSOCIATED' } });
    expect(associated.status).toBe(200);
    expect(associated.body).toMatchObject({ id: u.id, status: 'ASSOCIATED', file_url: u.file_url });
    expect(Date.parse(associated.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(u.updated_at));
    expect((await api.rest('PUT', `/backend/uploads/${u.id}/status`, { key: operator, body: { status: 'PENDING' } })).body.status).toBe(
      'PENDING',
    );
    for (const body of [{ status: 'DELETED' }, { status: 'associated' }, {}, { status: 1 }]) {
      const r = await api.rest('PUT', `/backend/uploads/${u.id}/status`, { key: operator, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe('ERR_INVALID_INPUT');
    }
    expect((await api.rest('PUT', `/backend/uploads/${randomUUID()}/status`, { key: operator, body: { status: 'PENDING' } })).status).toBe(
      404,
    );
  });

  it('deletes the record and the file; the file_url answers 404 from then on', async () => {
    const u = await upload(api, operator);
    const key = keyOf(u.file_url);
    expect(await store.has(key)).toBe(true);
    expect(await proxyStatus(u.file_url)).toBe(200);
    const r = await api.rest('DELETE', `/backend/uploads/${u.id}`, { key: operator });
    expect(r).toMatchObject({ status: 200, body: { success: true } });
    expect(await store.has(key)).toBe(false);
    expect((await api.rest('GET', `/backend/uploads/${u.id}`, { key: operator })).status).toBe(404);
    expect(await proxyStatus(u.file_url)).toBe(404);
    expect((await api.rest('DELETE', `/backend/uploads/${u.id}`, { key: operator })).status).toBe(404);
  });
});

describe('cleanup', () => {
  it('removes PENDING uploads older than `hours` (default 24), record and file; keeps ASSOCIATED and recent ones', async () => {
    const shop = await api.newOrg('Limpeza');
    const admin = await api.keyFor(shop, 'admin');
    const oldPending = await upload(api, shop.key);
    const oldAssociated = await upload(api, shop.key);
    const recentPending = await upload(api, shop.key);
    const twoHours = await upload(api, shop.key);
    await api.rest('PUT', `/backend/uploads/${oldAssociated.id}/status`, { key: shop.key, body: { status: 'ASSOCIATED' } });
    await ageUpload(api, oldPending.id, 25);
    await ageUpload(api, oldAssociated.id, 100);
    await ageUpload(api, twoHours.id, 2);
    // Another organisation's old PENDING upload is not this organisation's cleanup.
    const elsewhere = await upload(api, operator);
    await ageUpload(api, elsewhere.id, 48);

    const r = await api.rest('POST', '/backend/uploads/cleanup', { key: admin });
    expect(r).toMatchObject({ status: 200, body: { deleted_count: 1 } });
    expect(await store.has(keyOf(oldPending.file_url))).toBe(false);
    expect((await api.rest('GET', `/backend/uploads/${oldPending.id}`, { key: shop.key })).status).toBe(404);
    expect(await proxyStatus(oldPending.file_url)).toBe(404);
    for (const kept of [oldAssociated, recentPending, twoHours]) {
      expect((await api.rest('GET', `/backend/uploads/${kept.id}`, { key: shop.key })).status).toBe(200);
      expect(await store.has(keyOf(kept.file_url))).toBe(true);
    }
    expect((await api.rest('GET', `/backend/uploads/${elsewhere.id}`, { key: operator })).status).toBe(200);

    // `hours` from the query string: 1 takes the two-hour-old one, 0 every PENDING one.
    expect((await api.rest('POST', '/backend/uploads/cleanup?hours=1', { key: shop.key })).body).toEqual({ deleted_count: 1 });
    expect((await api.rest('POST', '/backend/uploads/cleanup?hours=0', { key: shop.key })).body).toEqual({ deleted_count: 1 });
    const left = await api.rest('GET', `/backend/uploads/tenant/${shop.tenantId}`, { key: shop.key });
    expect(left.body.map((u: { id: string }) => u.id)).toEqual([oldAssociated.id]);
  });

  it('refuses an invalid `hours` with 400 and operators with 403', async () => {
    for (const hours of ['-1', 'abc', '1.5', '', '87601']) {
      const r = await api.rest('POST', `/backend/uploads/cleanup?hours=${hours}`, { key: org.key });
      expect(r.status, hours).toBe(400);
      expect(r.body.code).toBe('ERR_INVALID_INPUT');
    }
    const r = await api.rest('POST', '/backend/uploads/cleanup', { key: operator });
    expect(r).toMatchObject({ status: 403, body: { code: 'ERR_FORBIDDEN' } });
  });

  it('the scheduled cleanup covers every organisation', async () => {
    const a = await api.newOrg('A');
    const b = await api.newOrg('B');
    const oldA = await upload(api, a.key);
    const oldB = await upload(api, b.key);
    const keptB = await upload(api, b.key);
    await ageUpload(api, oldA.id, 30);
    await ageUpload(api, oldB.id, 30);
    const before = await api.db.prisma.upload.count({
      where: { status: 'PENDING', created_at: { lt: new Date(Date.now() - 24 * 3600_000) } },
    });
    expect(await cleanupExpiredUploads(api.db.prisma, api.app.deps.storage)).toBe(before);
    for (const gone of [oldA, oldB]) expect(await store.has(keyOf(gone.file_url))).toBe(false);
    expect((await api.rest('GET', `/backend/uploads/${keptB.id}`, { key: b.key })).status).toBe(200);
    expect(await cleanupExpiredUploads(api.db.prisma, api.app.deps.storage)).toBe(0);
  });
});

describe('tenant isolation and permissions', () => {
  it('another organisation’s upload is 404 to read, re-label and delete, and stays as it was', async () => {
    const mine = await upload(api, org.key);
    const other = await api.newOrg('Intrusa');
    expect((await api.rest('GET', `/backend/uploads/${mine.id}`, { key: other.key })).status).toBe(404);
    const put = await api.rest('PUT', `/backend/uploads/${mine.id}/status`, { key: other.key, body: { status: 'ASSOCIATED' } });
    expect(put).toMatchObject({ status: 404, body: { code: 'ERR_NOT_FOUND' } });
    expect((await api.rest('DELETE', `/backend/uploads/${mine.id}`, { key: other.key })).status).toBe(404);
    await ageUpload(api, mine.id, 48);
    expect((await api.rest('POST', '/backend/uploads/cleanup?hours=0', { key: other.key })).body).toEqual({ deleted_count: 0 });
    expect((await api.rest('GET', `/backend/uploads/tenant/${other.tenantId}`, { key: other.key })).body).toEqual([]);
    const still = await api.rest('GET', `/backend/uploads/${mine.id}`, { key: org.key });
    expect(still.body).toMatchObject({ status: 'PENDING' });
    expect(await store.has(keyOf(mine.file_url))).toBe(true);
  });

  it('every role, and a key narrowed to one permission, may upload, read, re-label and delete; cleanup and the listing need uploads.manage', async () => {
    const narrowed = await api.keyFor(org, 'operator', ['pipeline.view']);
    const admin = await api.keyFor(org, 'admin');
    for (const key of [operator, narrowed, admin, org.key]) {
      const u = await upload(api, key);
      expect((await api.rest('GET', `/backend/uploads/${u.id}`, { key })).status).toBe(200);
      const manages = key === admin || key === org.key;
      expect((await api.rest('GET', `/backend/uploads/tenant/${org.tenantId}`, { key })).status).toBe(manages ? 200 : 403);
      expect((await api.rest('PUT', `/backend/uploads/${u.id}/status`, { key, body: { status: 'ASSOCIATED' } })).status).toBe(200);
      expect((await api.rest('DELETE', `/backend/uploads/${u.id}`, { key })).status).toBe(200);
    }
    expect((await api.rest('POST', '/backend/uploads/cleanup', { key: narrowed })).status).toBe(403);
    expect((await api.rest('POST', '/backend/uploads/cleanup', { key: await api.keyFor(org, 'admin', ['uploads.manage']) })).status).toBe(
      200,
    );
    expect((await api.rest('POST', '/backend/uploads/cleanup', { key: admin })).status).toBe(200);
    expect((await api.rest('POST', '/backend/uploads/cleanup', { key: org.key })).status).toBe(200);
  });
});

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
