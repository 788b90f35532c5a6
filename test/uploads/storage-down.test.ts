// STORAGE=s3 with a bucket that cannot be reached (its endpoint a closed port): uploads on both transports,
// the media proxy and deletes answer 503 SERVICE_UNAVAILABLE with Retry-After — never a 500 or the
// driver's message — and nothing is recorded. Runs in the `s3` project (it needs no bucket of its own).
import net from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp, type Org } from '../helpers/app.js';
import { s3Env } from '../helpers/s3.js';
import { testStorageKind } from '../helpers/storage.js';
import { PNG, uploadForm } from './helpers.js';

const env: Record<string, string> = {};
const api = useTestApp(() => env);
let org: Org;

beforeAll(async () => {
  org = await api.newOrg('Sem balde');
}, 120_000);

/** A loopback port nobody listens on (a server's, once closed). */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

// Filled before useTestApp's beforeAll reads it: hooks run in the order they were registered, and this
// module's top level runs first.
const port = await closedPort();
Object.assign(
  env,
  s3Env({
    bucket: 'funil',
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    accessKeyId: 'x',
    secretAccessKey: 'y',
    forcePathStyle: true,
  }),
);

const UPLOAD = 'mutation ($file: File!) { uploadFile(file: $file) { id } }';

describe.runIf(testStorageKind() === 's3')('a bucket that cannot be reached', () => {
  it('answers an upload with 503 and a clear message, records nothing', async () => {
    const before = await api.db.prisma.upload.count();
    const r = await api.rest('POST', '/backend/uploads', { key: org.key, body: uploadForm({ bytes: PNG, name: 'foto.png' }) });
    expect(r.status).toBe(503);
    expect(r.body).toEqual({
      code: 'ERR_SERVICE_UNAVAILABLE',
      message: 'O armazenamento de arquivos está indisponível; tente novamente em instantes',
    });
    expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(JSON.stringify(r.body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|S3/);

    const form = new FormData();
    form.append('operations', JSON.stringify({ query: UPLOAD, variables: { file: null } }));
    form.append('map', JSON.stringify({ 0: ['variables.file'] }));
    form.append('0', new Blob([PNG], { type: 'image/png' }), 'foto.png');
    const gql = await (await api.raw('/graphql', { method: 'POST', headers: { authorization: `Bearer ${org.key}` }, body: form })).json();
    expect(gql.errors[0].extensions).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    expect(await api.db.prisma.upload.count()).toBe(before);
  });

  it('answers the media proxy of a recorded key with 503, not 404 or 500', async () => {
    const storage_key = 'c'.repeat(48);
    await api.db.prisma.upload.create({
      data: { tenant_id: org.tenantId, storage_key, filename: 'foto', file_type: 'media', mime_type: 'image/png', size: PNG.byteLength },
    });
    const res = await api.raw(`/media/proxy/${storage_key}`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ code: 'ERR_SERVICE_UNAVAILABLE' });
    // An unknown key is still 404: the database answers that before the bucket is asked.
    expect((await api.raw(`/media/proxy/${'d'.repeat(48)}`)).status).toBe(404);
  });
});
