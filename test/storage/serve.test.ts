// The media proxy response over real HTTP (node:http + the app's fetch adapter): caching and CORS headers,
// ETag and If-None-Match, byte ranges, HEAD, active types downloaded as opaque bytes, and the file on
// disk closed whatever the client does. On the store the run names (test/helpers/storage.ts): from a
// directory or from a bucket, the answers are the same.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDirectoryStorage } from '../../src/storage/disk-storage.js';
import { isActiveContentType } from '../../src/storage/serve.js';
import { testStorageKind, useTestStore } from '../helpers/storage.js';
import { descriptorsOn, patternBytes, sameBytes } from './files.js';
import { startUploadServer, type UploadServer } from './upload-server.js';

const store = useTestStore();
const onDisk = testStorageKind() === 'disk';
let server: UploadServer;
const content = patternBytes(1000, 5);
let key: string;
/** The file behind `key`, on disk (null on a bucket: there is no descriptor to watch). */
let file: string | null;
const fileOf = (stored: string) => (onDisk ? createDirectoryStorage(store.root).resolveKey(stored) : Promise.resolve(null));

beforeAll(async () => {
  server = await startUploadServer(store.storage);
  key = (
    await server.storage.put(
      (async function* () {
        yield content;
      })(),
      { maxBytes: 10_000 },
    )
  ).key;
  file = await fileOf(key);
});
afterAll(() => server.close());

const media = (type = 'image/png', init?: RequestInit) => fetch(`${server.url}/media/${key}?type=${encodeURIComponent(type)}`, init);
const body = async (res: Response) => new Uint8Array(await res.arrayBuffer());

describe('serveFile', () => {
  it('serves the file with its type, public caching, CORS, nosniff, a strong ETag and Last-Modified', async () => {
    const res = await media('image/png');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('content-length')).toBe('1000');
    expect(res.headers.get('cache-control')).toBe('public, max-age=86400');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('content-disposition')).toBeNull();
    expect(res.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(new Date(res.headers.get('last-modified')!).getTime()).toBeGreaterThan(Date.now() - 600_000);
    expect(sameBytes(await body(res), content)).toBe(true);
    // The same file gives the same ETag.
    expect((await media()).headers.get('etag')).toBe(res.headers.get('etag'));
  });

  it('answers 304 to a matching If-None-Match (also weak, listed or *) and 200 to another tag', async () => {
    const etag = (await media()).headers.get('etag')!;
    for (const tag of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await media('image/png', { headers: { 'if-none-match': tag } });
      expect(res.status, tag).toBe(304);
      expect(res.headers.get('etag')).toBe(etag);
      expect(res.headers.get('cache-control')).toBe('public, max-age=86400');
      expect((await body(res)).byteLength).toBe(0);
    }
    const other = await media('image/png', { headers: { 'if-none-match': '"something-else"' } });
    expect(other.status).toBe(200);
    expect((await body(other)).byteLength).toBe(1000);
  });

  it('answers 304 to If-Modified-Since at or after the mtime, unless If-None-Match disagrees', async () => {
    const lastModified = (await media()).headers.get('last-modified')!;
    expect((await media('image/png', { headers: { 'if-modified-since': lastModified } })).status).toBe(304);
    const before = new Date(new Date(lastModified).getTime() - 1000).toUTCString();
    expect((await media('image/png', { headers: { 'if-modified-since': before } })).status).toBe(200);
    expect((await media('image/png', { headers: { 'if-modified-since': lastModified, 'if-none-match': '"x"' } })).status).toBe(200);
  });

  it('serves one byte range with 206 and Content-Range', async () => {
    const cases: [string, number, number][] = [
      ['bytes=0-9', 0, 9],
      ['bytes=990-', 990, 999],
      ['bytes=-5', 995, 999],
      ['bytes=500-5000', 500, 999],
      ['bytes=-5000', 0, 999],
      ['bytes=999-999', 999, 999],
    ];
    for (const [range, start, end] of cases) {
      const res = await media('image/png', { headers: { range } });
      expect(res.status, range).toBe(206);
      expect(res.headers.get('content-range')).toBe(`bytes ${start}-${end}/1000`);
      expect(res.headers.get('content-length')).toBe(String(end - start + 1));
      expect(sameBytes(await body(res), content.slice(start, end + 1)), range).toBe(true);
    }
  });

  it('answers 416 with bytes */size to a range outside the file', async () => {
    for (const range of ['bytes=1000-', 'bytes=5000-6000', 'bytes=-0']) {
      const res = await media('image/png', { headers: { range } });
      expect(res.status, range).toBe(416);
      expect(res.headers.get('content-range')).toBe('bytes */1000');
      expect((await body(res)).byteLength).toBe(0);
    }
  });

  it('sends the whole file for a malformed or multi-range header and for an If-Range that no longer matches', async () => {
    const ignored: Record<string, string>[] = [
      { range: 'bytes=0-1,5-6' },
      { range: 'bytes=abc' },
      { range: 'items=0-5' },
      { range: 'bytes=9-3' },
      { range: 'bytes=0-9', 'if-range': '"old"' },
    ];
    for (const headers of ignored) {
      const res = await media('image/png', { headers });
      expect(res.status, JSON.stringify(headers)).toBe(200);
      expect((await body(res)).byteLength).toBe(1000);
    }
    const etag = (await media()).headers.get('etag')!;
    expect((await media('image/png', { headers: { range: 'bytes=0-9', 'if-range': etag } })).status).toBe(206);
  });

  it('answers HEAD with the headers and no body', async () => {
    const res = await media('image/png', { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe('1000');
    expect(res.headers.get('etag')).toMatch(/^"/);
    expect((await body(res)).byteLength).toBe(0);
  });

  it('sends types a browser would run as an opaque download', async () => {
    const active = [
      'text/html',
      'text/html; charset=utf-8',
      'TEXT/HTML',
      'application/xhtml+xml',
      'image/svg+xml',
      'application/xml',
      'text/xml',
      'application/rss+xml',
      'application/javascript',
      'text/javascript',
      'application/x-javascript',
      'application/ecmascript',
      'text/xsl',
    ];
    for (const type of active) {
      expect(isActiveContentType(type), type).toBe(true);
      const res = await media(type);
      expect(res.headers.get('content-type'), type).toBe('application/octet-stream');
      expect(res.headers.get('content-disposition'), type).toBe('attachment');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      await res.arrayBuffer();
    }
    for (const type of ['image/jpeg', 'audio/ogg; codecs=opus', 'video/mp4', 'application/pdf', 'text/plain; charset=utf-8', 'text/csv']) {
      expect(isActiveContentType(type), type).toBe(false);
      const res = await media(type);
      expect(res.headers.get('content-type'), type).toBe(type);
      expect(res.headers.get('content-disposition'), type).toBeNull();
      await res.arrayBuffer();
    }
    // A type that is not a type is not trusted either.
    const bogus = await media('not a type');
    expect(bogus.headers.get('content-type')).toBe('application/octet-stream');
    expect(bogus.headers.get('content-disposition')).toBe('attachment');
    await bogus.arrayBuffer();
  });

  it.runIf(onDisk)('closes the file after every answer: full, ranged, 304, 416, HEAD', async () => {
    const etag = (await media()).headers.get('etag')!;
    await (await media('image/png', { headers: { range: 'bytes=0-9' } })).arrayBuffer();
    await (await media('image/png', { headers: { 'if-none-match': etag } })).arrayBuffer();
    await (await media('image/png', { headers: { range: 'bytes=5000-' } })).arrayBuffer();
    await (await media('image/png', { method: 'HEAD' })).arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(descriptorsOn(file!)).toBe(0);
  });

  it('streams a large file and lets it go when the client goes away mid-download', async () => {
    const large = await server.storage.put(
      (async function* () {
        for (let i = 0; i < 320; i++) yield patternBytes(64 * 1024, i);
      })(),
      { maxBytes: 30 * 1024 * 1024 },
    );
    const largeFile = await fileOf(large.key);
    const controller = new AbortController();
    const res = await fetch(`${server.url}/media/${large.key}`, { signal: controller.signal });
    expect(res.headers.get('content-length')).toBe(String(20 * 1024 * 1024));
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(first.value!.byteLength).toBeGreaterThan(0);
    if (largeFile) expect(descriptorsOn(largeFile)).toBe(1);
    controller.abort();
    if (largeFile) await expect.poll(() => descriptorsOn(largeFile), { timeout: 5000 }).toBe(0);
    // The server still answers (on a bucket: its connection to the bucket was given back).
    expect((await media()).status).toBe(200);
  });

  it('answers 404 for a key that is not a stored file', async () => {
    for (const path of ['%2e%2e%2f%2e%2e%2fetc%2fpasswd', 'f'.repeat(48), `${key}%00`]) {
      expect((await fetch(`${server.url}/media/${path}`)).status, path).toBe(404);
    }
  });
});
