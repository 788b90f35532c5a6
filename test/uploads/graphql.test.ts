// The same operations on /graphql: uploadFile with the GraphQL multipart request specification, reads,
// status, delete and cleanup, with the same rules and error codes as REST.
import fs from 'node:fs';
import { print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertCleanInput } from '../../src/schema/clean-input.js';
import { graphql } from '../gql/index.js';
import type { Org } from '../helpers/app.js';
import { keyOf, KEY_URL, patternBytes, PNG, sameBytes, upload, wav } from './helpers.js';
import { useUploadApp } from './helpers.js';

const { api, root, tempDir, store } = useUploadApp();
let org: Org;
let operator: string;
beforeAll(async () => {
  org = await api.newOrg('Grafo');
  operator = await api.keyFor(org, 'operator');
});
afterAll(() => {
  for (const dir of [root, tempDir]) fs.rmSync(dir, { recursive: true, force: true });
});

const UploadFileGql = graphql(`
  mutation UploadFile($file: File!, $type: UploadFileType, $folder: String) {
    uploadFile(file: $file, type: $type, folder: $folder) {
      id
      tenant_id
      filename
      file_type
      file_url
      mime_type
      size
      status
      folder
      created_at
      updated_at
    }
  }
`);

const UploadsGql = graphql(`
  query Uploads($id: UUID!, $tenant_id: UUID) {
    upload(id: $id) {
      id
      status
      file_url
      updated_at
    }
    uploads(tenant_id: $tenant_id) {
      id
    }
  }
`);

const StatusGql = graphql(`
  mutation UploadStatus($id: UUID!, $status: UploadStatus!) {
    updateUploadStatus(id: $id, status: $status) {
      id
      status
    }
  }
`);

const DeleteGql = graphql(`
  mutation DeleteUpload($id: UUID!) {
    deleteUpload(id: $id) {
      success
    }
  }
`);

const CleanupGql = graphql(`
  mutation CleanupUploads($hours: Int) {
    cleanupUploads(hours: $hours) {
      deleted_count
    }
  }
`);

/** A GraphQL multipart request (operations, map, the file as part "0"). */
async function uploadFile(
  key: string,
  file: { bytes: Uint8Array<ArrayBuffer>; name: string; type?: string },
  variables: { type?: string; folder?: string } = {},
) {
  const form = new FormData();
  form.append('operations', JSON.stringify({ query: print(UploadFileGql), variables: { ...variables, file: null } }));
  form.append('map', JSON.stringify({ 0: ['variables.file'] }));
  form.append('0', new Blob([file.bytes], { type: file.type ?? 'application/octet-stream' }), file.name);
  const res = await api.raw('/graphql', { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  return { status: res.status, ...(await res.json()) };
}

describe('uploads on /graphql', () => {
  it('uploadFile stores the file like the REST route does', async () => {
    const r = await uploadFile(
      operator,
      { bytes: wav(), name: 'recado.de.voz.wav', type: 'audio/wav' },
      { type: 'audio', folder: 'atendimento' },
    );
    expect(r.errors).toBeUndefined();
    const created = r.data.uploadFile;
    expect(created).toMatchObject({
      tenant_id: org.tenantId,
      filename: 'recado.de.voz',
      file_type: 'audio',
      mime_type: 'audio/wav',
      size: wav().byteLength,
      status: 'PENDING',
      folder: 'atendimento',
    });
    expect(created.file_url).toMatch(KEY_URL);
    expect(await store.has(keyOf(created.file_url))).toBe(true);
    // The REST read answers the same object.
    expect((await api.rest('GET', `/backend/uploads/${created.id}`, { key: operator })).body).toEqual(created);
  });

  it('takes a file of exactly 10 MB whole', async () => {
    const exact = patternBytes(10 * 1024 * 1024, 2);
    const r = await uploadFile(operator, { bytes: exact, name: 'exato.bin' });
    expect(r.errors).toBeUndefined();
    expect(r.data.uploadFile.size).toBe(exact.byteLength);
    expect(sameBytes((await store.read(keyOf(r.data.uploadFile.file_url)))!, exact)).toBe(true);
  });

  it('refuses what REST refuses, with the same codes, leaving nothing behind', async () => {
    const files = await store.contents();
    const badFolder = await uploadFile(operator, { bytes: PNG, name: 'a.png' }, { folder: '../x' });
    expect(badFolder.errors[0].extensions).toMatchObject({ code: 'INVALID_INPUT', status: 400 });
    const notAudio = await uploadFile(operator, { bytes: PNG, name: 'a.png' }, { type: 'audio' });
    expect(notAudio.errors[0].extensions.code).toBe('INVALID_INPUT');
    const badType = await uploadFile(operator, { bytes: PNG, name: 'a.png' }, { type: 'video' });
    expect(badType.errors[0].extensions.code).toBe('INVALID_INPUT');
    const tooLarge = await uploadFile(operator, { bytes: patternBytes(10 * 1024 * 1024 + 1), name: 'grande.bin' });
    expect(tooLarge.errors[0].extensions).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
    expect(await store.contents()).toEqual(files);
  });

  it('reads, re-labels, deletes and cleans up; another organisation is not found; cleanup is for owner and admin', async () => {
    const u = await upload(api, operator);
    // The organisation's listing needs uploads.manage (owner, admin).
    expect((await api.gql(UploadsGql, { id: u.id, tenant_id: org.tenantId }, operator)).errors?.[0].extensions.code).toBe('FORBIDDEN');
    const read = await api.gql(UploadsGql, { id: u.id, tenant_id: org.tenantId }, org.key);
    expect(read.data?.upload).toMatchObject({ id: u.id, status: 'PENDING', file_url: u.file_url });
    expect(read.data?.uploads.map((x) => x.id)).toContain(u.id);
    expect((await api.gql(UploadsGql, { id: u.id }, org.key)).data?.uploads.length).toBe(read.data?.uploads.length);

    const other = await api.newOrg('Outra');
    const foreign = await api.gql(UploadsGql, { id: u.id, tenant_id: org.tenantId }, other.key);
    expect(foreign.errors?.[0].extensions.code).toBe('NOT_FOUND');
    expect((await api.gql(StatusGql, { id: u.id, status: 'ASSOCIATED' }, other.key)).errors?.[0].extensions.code).toBe('NOT_FOUND');

    expect((await api.gql(StatusGql, { id: u.id, status: 'ASSOCIATED' }, operator)).data?.updateUploadStatus.status).toBe('ASSOCIATED');
    expect((await api.gql(CleanupGql, {}, operator)).errors?.[0].extensions.code).toBe('FORBIDDEN');
    expect((await api.gql(CleanupGql, { hours: 0 }, org.key)).data?.cleanupUploads.deleted_count).toBeGreaterThanOrEqual(0);
    expect((await api.gql(UploadsGql, { id: u.id }, org.key)).data?.upload.status).toBe('ASSOCIATED'); // kept

    expect((await api.gql(DeleteGql, { id: u.id }, operator)).data?.deleteUpload.success).toBe(true);
    expect(await store.has(keyOf(u.file_url))).toBe(false);
    expect((await api.gql(DeleteGql, { id: u.id }, operator)).errors?.[0].extensions.code).toBe('NOT_FOUND');
  });
});

describe('input hygiene and files', () => {
  it('does not walk a sent file as if it were JSON input (Yoga’s File is not a global Blob)', () => {
    // The shape of Yoga's parsed file: methods and internal fields, here one holding a NUL character.
    const yogaFile = { name: 'a.bin', size: 3, arrayBuffer: async () => new ArrayBuffer(3), _internal: 'a\u0000b' };
    expect(() => assertCleanInput({ file: yogaFile })).not.toThrow();
    expect(() => assertCleanInput({ bytes: new Uint8Array(10 * 1024 * 1024) })).not.toThrow();
    // Plain JSON input is still checked.
    expect(() => assertCleanInput({ folder: { _internal: 'a\u0000b' } })).toThrow(/inválidos/);
  });
});
