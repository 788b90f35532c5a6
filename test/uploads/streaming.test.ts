// Uploads through the real HTTP server with real bodies: the 10 MB boundary, alone and with several
// uploads at once, a 50 MB body cut off early, a declared oversized body, a client that walks away, a
// body that stalls (408), and the server's resident memory while it takes 10 MB and refuses 10 MB + 1
// byte. Whatever is refused leaves no file and no record.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, type RunningServer } from '../../src/http/server.js';
import { PART_BYTES } from '../../src/storage/s3-storage.js';
import type { Org } from '../helpers/app.js';
import { keyOf, patternBytes, startMeasuredApp, storedFiles, streamedForm, uploadForm, useUploadApp } from './helpers.js';

const TEN_MB = 10 * 1024 * 1024;
const { api, root, store } = useUploadApp();
let server: RunningServer;
let org: Org;
const stops: (() => Promise<void>)[] = [];
beforeAll(async () => {
  server = await listen(api.app, { ...api.config, host: '127.0.0.1', port: 0 });
  org = await api.newOrg('Grandes');
});
afterAll(async () => {
  for (const stop of stops) await stop();
  await server?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

const post = (body: BodyInit, headers: Record<string, string> = {}, init: RequestInit = {}) =>
  fetch(`${server.url}/backend/uploads`, { method: 'POST', body, headers: { authorization: `Bearer ${org.key}`, ...headers }, ...init });

/** Checks that `fn` left storage and the uploads table as they were. */
async function leavesNothing(fn: () => Promise<unknown>) {
  const files = await store.contents();
  const records = await api.db.prisma.upload.count();
  await fn();
  expect(await store.contents()).toEqual(files);
  expect(await api.db.prisma.upload.count()).toBe(records);
}

describe('uploads over the real server', () => {
  it('accepts exactly 10 MB and refuses 10 MB + 1 byte with 413, leaving no file and no record', async () => {
    const exact = patternBytes(TEN_MB, 3);
    const accepted = await post(uploadForm({ bytes: exact, name: 'exato.bin' }));
    expect(accepted.status).toBe(200);
    const upload = await accepted.json();
    expect(upload.size).toBe(TEN_MB);
    const stored = (await store.read(keyOf(upload.file_url)))!;
    expect(createHash('sha256').update(stored).digest('hex')).toBe(createHash('sha256').update(exact).digest('hex'));

    await leavesNothing(async () => {
      const over = await post(uploadForm({ bytes: patternBytes(TEN_MB + 1, 4), name: 'grande.bin' }));
      expect(over.status).toBe(413);
      expect(await over.json()).toEqual({ code: 'ERR_PAYLOAD_TOO_LARGE', message: expect.any(String) });
    });
  });

  it('takes several uploads at once, each under its own limit: three of exactly 10 MB stored whole, 10 MB + 1 byte refused', async () => {
    const files = await store.contents();
    const records = await api.db.prisma.upload.count();
    const exact = [5, 6, 7].map((seed) => patternBytes(TEN_MB, seed));
    const [a, b, c, over] = await Promise.all([
      ...exact.map((bytes, i) => post(uploadForm({ bytes, name: `junto-${i}.bin` }))),
      post(uploadForm({ bytes: patternBytes(TEN_MB + 1, 8), name: 'grande.bin' })),
    ]);
    expect(over.status).toBe(413);
    expect((await over.json()).code).toBe('ERR_PAYLOAD_TOO_LARGE');
    for (const [i, res] of [a, b, c].entries()) {
      expect(res.status).toBe(200);
      const upload = await res.json();
      expect(upload.size).toBe(TEN_MB);
      const stored = (await store.read(keyOf(upload.file_url)))!;
      expect(createHash('sha256').update(stored).digest('hex')).toBe(createHash('sha256').update(exact[i]).digest('hex'));
    }
    // The three files and their records, and nothing of the refused one.
    expect((await store.contents()).length).toBe(files.length + 3);
    expect(await api.db.prisma.upload.count()).toBe(records + 3);
  });

  it('answers 413 to a streamed 50 MB body before the client has sent it, leaving nothing behind', async () => {
    await leavesNothing(async () => {
      const total = 50 * 1024 * 1024;
      const { body, state, contentType } = streamedForm(total);
      const res = await post(body, { 'content-type': contentType }, { duplex: 'half' } as RequestInit);
      const sentWhenAnswered = state.sent;
      expect(res.status).toBe(413);
      expect((await res.json()).code).toBe('ERR_PAYLOAD_TOO_LARGE');
      expect(state.finished).toBe(false);
      expect(sentWhenAnswered).toBeLessThan(total / 2);
    });
  });

  it('refuses a declared Content-Length over the limit at once', async () => {
    await leavesNothing(async () => {
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(`${server.url}/backend/uploads`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${org.key}`,
            'content-type': 'multipart/form-data; boundary=x',
            'content-length': String(50 * 1024 * 1024),
          },
        });
        req.on('response', (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        });
        req.on('error', reject);
        req.write('--x\r\n'); // the rest never comes: the answer must not wait for it
      });
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body).code).toBe('ERR_PAYLOAD_TOO_LARGE');
    });
  });

  it('leaves no partial file, no object and no record when the client walks away mid-upload (after a whole part)', async () => {
    await leavesNothing(async () => {
      const { body, contentType, state } = streamedForm(8 * 1024 * 1024, { stallAfter: 6 * 1024 * 1024 });
      const controller = new AbortController();
      const response = post(body, { 'content-type': contentType }, { duplex: 'half', signal: controller.signal } as RequestInit);
      if (store.kind === 'disk')
        await expect.poll(async () => (await store.contents()).filter((f) => f.startsWith('.partial')).length, { timeout: 15_000 }).toBe(1);
      else await expect.poll(() => state.sent, { timeout: 15_000 }).toBeGreaterThanOrEqual(6 * 1024 * 1024);
      controller.abort();
      await expect(response).rejects.toThrow();
      if (store.kind === 'disk')
        await expect.poll(async () => (await store.contents()).filter((f) => f.startsWith('.partial')).length, { timeout: 15_000 }).toBe(0);
    });
  });

  it('answers 408 to an upload whose body stalls past REQUEST_BODY_TIMEOUT_MS, leaving nothing behind', async () => {
    const impatient = await listen(api.app, { ...api.config, host: '127.0.0.1', port: 0, requestBodyTimeoutMs: 1_000 });
    try {
      await leavesNothing(async () => {
        const { body, state, contentType } = streamedForm(8 * 1024 * 1024, { stallAfter: 1024 * 1024 });
        const res = await fetch(`${impatient.url}/backend/uploads`, {
          method: 'POST',
          body,
          headers: { authorization: `Bearer ${org.key}`, 'content-type': contentType },
          duplex: 'half',
        } as RequestInit);
        expect(res.status).toBe(408);
        expect(await res.json()).toEqual({ code: 'ERR_REQUEST_TIMEOUT', message: expect.any(String) });
        expect(state.finished).toBe(false);
      });
    } finally {
      await impatient.close();
    }
  });

  it('keeps the server’s resident memory growth under 10 MB while it takes 10 MB and refuses 10 MB + 1 byte', async () => {
    // The app in its own process (app-server.ts), on the same kind of database, measuring the memory it
    // holds every 5 ms while the uploads run (memorySampler). A control request that reads a whole body
    // into memory shows the measurement tells such a server apart.
    const app = await startMeasuredApp(api, store);
    stops.push(app.stop);
    const filesBefore = await store.contents();
    const send = async (target: string, size: number, expected: number) => {
      const res = await fetch(`${app.url}${target}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${app.key}` },
        body: uploadForm({ bytes: patternBytes(size, size & 7), name: 'a.bin' }),
      });
      expect(res.status).toBe(expected);
      await res.arrayBuffer();
    };
    const round = async () => {
      await send('/backend/uploads', TEN_MB, 200);
      await send('/backend/uploads', TEN_MB + 1, 413);
    };
    // The first round grows the heap once (code paths, V8 spaces); the measured round must not grow it again.
    await round();
    const uploads = await app.measure(round);
    expect(uploads.growth).toBeLessThan(10 * 1024 * 1024);
    // On a bucket, one multipart part (5 MB, S3's smallest) is held while it is sent: still not the file.
    expect(uploads.heldGrowth).toBeLessThan((store.kind === 's3' ? PART_BYTES : 0) + 2 * 1024 * 1024);
    const buffered = await app.measure(() => send('/buffered', TEN_MB, 200));
    expect(buffered.heldGrowth).toBeGreaterThan(10 * 1024 * 1024);
    // The two accepted files, nothing partial.
    if (store.kind === 'disk') expect(storedFiles(app.storageDir).length).toBe(2);
    else expect((await store.contents()).length).toBe(filesBefore.length + 2);
    await app.stop();
  }, 180_000);
});
