// The public media proxy over the real HTTP server: headers (type, cache, CORS, nosniff), conditional
// requests, ranges, HEAD, active content as attachments, and every path that is not a live upload's
// key answered 404, sent as raw request targets (no client-side normalisation). On the run's store: a
// directory, or a bucket (TEST_STORAGE=s3).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, type RunningServer } from '../../src/http/server.js';
import type { Org } from '../helpers/app.js';
import { testStorageKind } from '../helpers/storage.js';
import { descriptorsOn } from '../storage/files.js';
import { keyOf, pathOfKey, patternBytes, PNG, sameBytes, upload, useUploadApp } from './helpers.js';

const { api, root } = useUploadApp();
let server: RunningServer;
let org: Org;
beforeAll(async () => {
  server = await listen(api.app, { ...api.config, host: '127.0.0.1', port: 0 });
  org = await api.newOrg('Mídia');
});
afterAll(async () => {
  await server?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

/** A GET (or HEAD) with the request target sent exactly as written. */
function rawGet(
  target: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: new URL(server.url).port, path: target, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const proxyPath = (fileUrl: string) => new URL(fileUrl).pathname;

describe('GET /media/proxy/{path}', () => {
  it('serves the file without a key, with its stored type, public caching, CORS for everyone and nosniff', async () => {
    const u = await upload(api, org.key, { bytes: PNG, name: 'logo.png' });
    const res = await rawGet(proxyPath(u.file_url));
    expect(res.status).toBe(200);
    expect(res.headers).toMatchObject({
      'content-type': 'image/png',
      'cache-control': 'public, max-age=86400',
      'access-control-allow-origin': '*',
      'x-content-type-options': 'nosniff',
      'content-length': String(PNG.byteLength),
      'accept-ranges': 'bytes',
      etag: expect.stringMatching(/^"[^"]+"$/),
    });
    expect(res.headers['content-disposition']).toBeUndefined();
    expect(sameBytes(res.body, PNG)).toBe(true);
    // A key that would not authenticate changes nothing: the route is public.
    expect((await rawGet(proxyPath(u.file_url), { authorization: 'Bearer nada' })).status).toBe(200);
  });

  it('answers 304 to a matching If-None-Match, 206 to a range, 416 outside the file, and HEAD without a body', async () => {
    const bytes = patternBytes(300_000, 5);
    const u = await upload(api, org.key, { bytes, name: 'dados.bin', type: 'application/x-funil' });
    const target = proxyPath(u.file_url);
    const full = await rawGet(target);
    expect(full.headers['content-type']).toBe('application/x-funil');
    const etag = full.headers.etag!;

    const cached = await rawGet(target, { 'if-none-match': etag });
    expect(cached.status).toBe(304);
    expect(cached.body.byteLength).toBe(0);
    expect((await rawGet(target, { 'if-none-match': '"outra"' })).status).toBe(200);

    const part = await rawGet(target, { range: 'bytes=1000-1999' });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe('bytes 1000-1999/300000');
    expect(sameBytes(part.body, bytes.subarray(1000, 2000))).toBe(true);
    const tail = await rawGet(target, { range: 'bytes=-100' });
    expect(tail.status).toBe(206);
    expect(sameBytes(tail.body, bytes.subarray(299_900))).toBe(true);
    const outside = await rawGet(target, { range: 'bytes=300000-' });
    expect(outside.status).toBe(416);
    expect(outside.headers['content-range']).toBe('bytes */300000');

    const head = await rawGet(target, {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers).toMatchObject({ 'content-length': '300000', etag, 'content-type': 'application/x-funil' });
    expect(head.body.byteLength).toBe(0);
  });

  it('serves content a browser would run (HTML, SVG) as an opaque attachment', async () => {
    const html = await upload(api, org.key, {
      bytes: new TextEncoder().encode('<html><script>alert(document.cookie)</script></html>'),
      name: 'x.png',
      type: 'image/png',
    });
    const svg = await upload(api, org.key, {
      bytes: new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'),
      name: 'icone.svg',
    });
    expect([html.mime_type, svg.mime_type]).toEqual(['text/html', 'image/svg+xml']);
    for (const u of [html, svg]) {
      const res = await rawGet(proxyPath(u.file_url));
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/octet-stream');
      expect(res.headers['content-disposition']).toBe('attachment');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('answers 404 to every path that is not a live upload’s key', async () => {
    const live = await upload(api, org.key, { bytes: PNG, name: 'viva.png' });
    const key = keyOf(live.file_url);
    const secret = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'funil-outside-')), 'segredo.txt');
    fs.writeFileSync(secret, 'SEGREDO');

    // A symlink planted in storage under a key that has a record, pointing outside storage.
    const linked = randomBytes(24).toString('hex');
    // A fan-out directory replaced by a symlink to a directory outside storage that holds the "file"
    // (never the live file's own fan-out directory, which the test still reads at the end).
    const fanOut = key.startsWith('ee') ? 'ef' : 'ee';
    const viaDir = `${fanOut}${randomBytes(23).toString('hex')}`;
    if (testStorageKind() === 'disk') {
      fs.mkdirSync(path.dirname(pathOfKey(root, linked)), { recursive: true });
      fs.symlinkSync(secret, pathOfKey(root, linked));
      const outsideDir = fs.mkdtempSync(path.join(os.tmpdir(), 'funil-outside-dir-'));
      fs.mkdirSync(path.join(outsideDir, viaDir.slice(2, 4)));
      fs.writeFileSync(path.join(outsideDir, viaDir.slice(2, 4), viaDir), 'SEGREDO');
      fs.rmSync(path.join(root, fanOut), { recursive: true, force: true });
      fs.symlinkSync(outsideDir, path.join(root, fanOut));
    }
    // (On a bucket these two are records whose file is missing.)
    for (const storage_key of [linked, viaDir]) {
      await api.db.prisma.upload.create({
        data: { tenant_id: org.tenantId, storage_key, filename: 'plantado', file_type: 'media', mime_type: 'text/plain', size: 7 },
      });
    }

    // Another organisation's file after it was deleted, and one removed by cleanup.
    const other = await api.newOrg('Outra');
    const deleted = await upload(api, other.key);
    await api.rest('DELETE', `/backend/uploads/${deleted.id}`, { key: other.key });
    const cleaned = await upload(api, other.key);
    await api.rest('POST', '/backend/uploads/cleanup?hours=0', { key: other.key });
    // A stored file without a record (an orphan).
    const orphan = (await api.app.deps.storage.put(new Blob([PNG]).stream(), { maxBytes: 1000 })).key;

    const hostile: [string, string][] = [
      ['dot segments', '/media/proxy/../../../../etc/passwd'],
      ['encoded dot segments', '/media/proxy/%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd'],
      ['double-encoded dot segments', '/media/proxy/%252e%252e%252f%252e%252e%252fetc%252fpasswd'],
      ['encoded backslashes', '/media/proxy/..%5c..%5c..%5cetc%5cpasswd'],
      ['raw backslashes', '/media/proxy/..\\..\\..\\etc\\passwd'],
      ['an absolute path', '/media/proxy//etc/passwd'],
      ['an encoded absolute path', `/media/proxy/%2F${encodeURIComponent(secret)}`],
      ['a NUL after a live key', `/media/proxy/${key}%00.png`],
      ['a symlink planted in storage', `/media/proxy/${linked}`],
      ['a symlinked fan-out directory', `/media/proxy/${viaDir}`],
      ['another organisation’s deleted file', proxyPath(deleted.file_url)],
      ['a cleaned-up file', proxyPath(cleaned.file_url)],
      ['an overlong name', `/media/proxy/${'a'.repeat(8000)}`],
      ['a key with one character more', `/media/proxy/${key}0`],
      ['a key in upper case', `/media/proxy/${key.toUpperCase()}`],
      ['the storage path of a key', `/media/proxy/${key.slice(0, 2)}/${key.slice(2, 4)}/${key}`],
      ['the partial-files directory', `/media/proxy/.partial/${key}`],
      ['a stored file without a record', `/media/proxy/${orphan}`],
    ];
    for (const [name, target] of hostile) {
      const res = await rawGet(target);
      expect(res.status, name).toBe(404);
      expect(res.body.toString(), name).not.toContain('SEGREDO');
      expect(res.body.toString(), name).not.toContain('root:');
    }
    // The proxy itself works: the live key is served.
    expect((await rawGet(proxyPath(live.file_url))).status).toBe(200);
  });

  // A client that leaves before or while its answer is sent: the server's descriptor on the file is closed
  // on every path, not left for the garbage collector (Node's DEP0137 warning, seen in the bench). The
  // request's signal may already be aborted when the handler opens the file: that path leaked.
  it.runIf(testStorageKind() === 'disk')('closes the file when the client leaves, whenever it leaves', async () => {
    const u = await upload(api, org.key, { bytes: patternBytes(300_000, 7), name: 'grande.bin' });
    const file = pathOfKey(root, keyOf(u.file_url));
    const port = Number(new URL(server.url).port);
    const leaveAfter = [0, 0, 0, 1, 2, 3, 5, 8, 13, 20, 'first bytes'] as const;
    for (const moment of [...leaveAfter, ...leaveAfter]) {
      await new Promise<void>((resolve) => {
        const socket = net.connect(port, '127.0.0.1', () => {
          socket.write(`GET ${proxyPath(u.file_url)} HTTP/1.1\r\nHost: funil.test\r\n\r\n`);
          if (moment === 'first bytes') socket.once('data', () => socket.destroy());
          else if (moment === 0) socket.destroy();
          else setTimeout(() => socket.destroy(), moment);
        });
        socket.on('error', () => {});
        socket.on('close', () => resolve());
      });
    }
    // Every descriptor the server opened on the file is closed within moments (a leak stays open until a collection).
    for (let waited = 0; descriptorsOn(file) > 0 && waited < 3000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(descriptorsOn(file)).toBe(0);
    // And the file is still served whole.
    expect((await rawGet(proxyPath(u.file_url))).body.byteLength).toBe(300_000);
  });
});
