// The storage on real files, on the store the run names (test/helpers/storage.ts: a directory, or an
// S3-compatible bucket): round trips, the size limit leaving nothing behind, failures mid-stream, listing
// for the orphan sweep. Then what only the directory does (fan-out, held descriptors, stale partial
// files, keys that are not keys) and what only the bucket does (multipart, an unreachable bucket).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { createDirectoryStorage, type DirectoryStorage } from '../../src/storage/disk-storage.js';
import { createS3Storage } from '../../src/storage/s3-storage.js';
import { HEAD_BYTES, type FileStorage } from '../../src/storage/storage.js';
import { testStorageKind, useTestStore } from '../helpers/storage.js';
import { countingSource, descriptorsOn, filesUnder, patternBytes, sameBytes, temporaryRoot } from './files.js';

const store = useTestStore();
let storage: FileStorage;
beforeAll(() => {
  storage = store.storage;
});

function webStream(bytes: Uint8Array, chunk = 10_000): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + chunk));
      offset += chunk;
    },
  });
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** Checks that `fn` left the store holding what it held before. */
async function leavesNothing(fn: () => Promise<unknown>) {
  const before = await store.contents();
  await fn();
  expect(await store.contents()).toEqual(before);
}

describe('put, open, delete', () => {
  it('stores a web stream and reads it back whole and by range', async () => {
    const bytes = patternBytes(300_000);
    const before = await store.contents();
    const stored = await storage.put(webStream(bytes), { maxBytes: 1_000_000 });
    expect(stored.key).toMatch(/^[0-9a-f]{48}$/);
    expect(stored.size).toBe(300_000);
    expect(sameBytes(stored.head, bytes.slice(0, HEAD_BYTES))).toBe(true);
    expect((await store.contents()).length).toBe(before.length + 1);
    expect(sameBytes((await store.read(stored.key))!, bytes)).toBe(true);

    const opened = (await storage.open(stored.key))!;
    expect(opened.size).toBe(300_000);
    expect(opened.mtime.getTime()).toBeGreaterThan(Date.now() - 600_000);
    expect(sameBytes(await readAll(opened.stream()), bytes)).toBe(true);

    const again = (await storage.open(stored.key))!;
    expect(sameBytes(await readAll(again.stream({ start: 70_000, end: 200_000 })), bytes.slice(70_000, 200_001))).toBe(true);
    const last = (await storage.open(stored.key))!;
    expect(sameBytes(await readAll(last.stream({ start: 299_999, end: 299_999 })), bytes.slice(299_999))).toBe(true);

    expect(await storage.delete(stored.key)).toBe(true);
    expect(await storage.open(stored.key)).toBeNull();
    expect(await storage.delete(stored.key)).toBe(false);
    expect(await store.contents()).toEqual(before);
  });

  it('stores an async iterable, a small file whole in its head, and an empty file', async () => {
    const small = await storage.put(
      (async function* () {
        yield new TextEncoder().encode('olá ');
        yield new TextEncoder().encode('mundo');
      })(),
      { maxBytes: 100 },
    );
    expect(small.size).toBe(Buffer.byteLength('olá mundo'));
    expect(new TextDecoder().decode(small.head)).toBe('olá mundo');
    expect(await new Response((await storage.open(small.key))!.stream()).text()).toBe('olá mundo');

    const empty = await storage.put((async function* () {})(), { maxBytes: 100 });
    expect(empty.size).toBe(0);
    expect(empty.head.byteLength).toBe(0);
    const opened = (await storage.open(empty.key))!;
    expect(opened.size).toBe(0);
    expect(await readAll(opened.stream())).toEqual(new Uint8Array());
    expect(small.key).not.toBe(empty.key);
  });

  it('accepts exactly maxBytes', async () => {
    const { source } = countingSource(1_000_000, 65_536);
    expect((await storage.put(source, { maxBytes: 1_000_000 })).size).toBe(1_000_000);
  });

  it('stores a file of several parts (over 5 MB, a multipart upload on S3) and reads any range of it', async () => {
    const bytes = patternBytes(12 * 1024 * 1024 + 7, 9);
    const stored = await storage.put(webStream(bytes, 64 * 1024), { maxBytes: 20 * 1024 * 1024 });
    expect(stored.size).toBe(bytes.byteLength);
    const start = 5 * 1024 * 1024 - 3; // across the first part boundary
    const range = await readAll((await storage.open(stored.key))!.stream({ start, end: start + 99 }));
    expect(sameBytes(range, bytes.slice(start, start + 100))).toBe(true);
    expect(
      createHash('sha256')
        .update((await store.read(stored.key))!)
        .digest('hex'),
    ).toBe(createHash('sha256').update(bytes).digest('hex'));
  });

  it('refuses a stream past maxBytes with 413 as soon as it passes, stops pulling, and leaves no file', async () => {
    await leavesNothing(async () => {
      const { source, state } = countingSource(50 * 1024 * 1024, 64 * 1024);
      const error = await storage.put(source, { maxBytes: 1_000_000 }).catch((e) => e);
      expect(error).toBeInstanceOf(AppError);
      expect(error.kind).toBe('PAYLOAD_TOO_LARGE');
      expect(error.status).toBe(413);
      // The chunk that crossed the limit was the last one pulled, and the source was told to stop.
      expect(state.pulled).toBe(Math.ceil(1_000_001 / 65_536) * 65_536);
      expect(state.returned).toBe(true);
    });
  });

  it('refuses with 413 a file that passes the limit after whole parts were sent, leaving no object', async () => {
    await leavesNothing(async () => {
      const { source, state } = countingSource(50 * 1024 * 1024, 64 * 1024);
      const error = await storage.put(source, { maxBytes: 11 * 1024 * 1024 }).catch((e) => e);
      expect(error).toMatchObject({ kind: 'PAYLOAD_TOO_LARGE', status: 413 });
      expect(state.returned).toBe(true);
    });
  });

  it('cancels a web stream that passes the limit', async () => {
    await leavesNothing(async () => {
      let cancelled = false;
      let pulls = 0;
      const source = new ReadableStream<Uint8Array>({
        pull: (controller) => void (pulls++, controller.enqueue(new Uint8Array(1000))),
        cancel: () => void (cancelled = true),
      });
      await expect(storage.put(source, { maxBytes: 10_500 })).rejects.toMatchObject({ kind: 'PAYLOAD_TOO_LARGE' });
      expect(cancelled).toBe(true);
      expect(pulls).toBeLessThan(15);
    });
  });

  it('leaves nothing when the source fails mid-stream, before or after a whole part', async () => {
    await leavesNothing(async () => {
      for (const before of [100_000, 6 * 1024 * 1024]) {
        const failing = (async function* () {
          for (let sent = 0; sent < before; sent += 64 * 1024) yield new Uint8Array(64 * 1024);
          throw new Error('connection reset');
        })();
        await expect(storage.put(failing, { maxBytes: 10_000_000 })).rejects.toThrow('connection reset');
      }
    });
  });

  it('open and delete refuse what is not a key', async () => {
    for (const key of ['..', '../x', '/etc/passwd', 'f'.repeat(48), 'F'.repeat(48), 'a'.repeat(49), '', `${'a'.repeat(48)}\0`]) {
      expect(await storage.open(key), key).toBeNull();
      expect(await storage.delete(key), key).toBe(false);
    }
  });
});

describe('list', () => {
  it('lists stored keys with their mtime and nothing else', async () => {
    const a = await storage.put(webStream(patternBytes(10)), { maxBytes: 100 });
    const b = await storage.put(webStream(patternBytes(20)), { maxBytes: 100 });
    const listed: { key: string; mtime: Date }[] = [];
    for await (const entry of storage.list()) listed.push(entry);
    const keys = listed.map((e) => e.key);
    expect(keys).toEqual(expect.arrayContaining([a.key, b.key]));
    expect(new Set(keys).size).toBe(keys.length);
    for (const entry of listed) {
      expect(entry.key).toMatch(/^[0-9a-f]{48}$/);
      expect(entry.mtime).toBeInstanceOf(Date);
      expect(entry.mtime.getTime()).toBeGreaterThan(Date.now() - 600_000);
    }
  });
});

describe.runIf(testStorageKind() === 's3')('the bucket', () => {
  it('lists only objects named like a key (a shared bucket holds others)', async () => {
    const s3 = store.s3!;
    for (const Key of ['README', 'f'.repeat(47), `${'a'.repeat(48)}.bak`, `prefix/${'b'.repeat(48)}`]) {
      await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key, Body: 'x' }));
    }
    const stored = await storage.put(webStream(patternBytes(10)), { maxBytes: 100 });
    const listed: string[] = [];
    for await (const entry of storage.list()) listed.push(entry.key);
    expect(listed).toContain(stored.key);
    expect(listed.every((key) => /^[0-9a-f]{48}$/.test(key))).toBe(true);
  });

  it('answers 503 SERVICE_UNAVAILABLE, not a driver error, when the bucket cannot be reached', async () => {
    // A port nothing listens on: a closed server's.
    const closed = await import('node:net').then(
      (net) =>
        new Promise<number>((resolve) => {
          const server = net.createServer().listen(0, '127.0.0.1', () => {
            const { port } = server.address() as { port: number };
            server.close(() => resolve(port));
          });
        }),
    );
    const down = createS3Storage({ ...store.s3!.settings, endpoint: `http://127.0.0.1:${closed}` });
    const key = 'a'.repeat(48);
    const unavailable = { kind: 'SERVICE_UNAVAILABLE', status: 503 };
    const { source, state } = countingSource(100_000);
    await expect(down.put(source, { maxBytes: 1_000_000 })).rejects.toMatchObject(unavailable);
    expect(state.returned || state.finished).toBe(true); // the sender was not left hanging
    await expect(down.open(key)).rejects.toMatchObject(unavailable);
    await expect(down.delete(key)).rejects.toMatchObject(unavailable);
    await expect(
      (async () => {
        for await (const entry of down.list()) void entry;
      })(),
    ).rejects.toMatchObject(unavailable);
    await expect(down.removeStalePartials(new Date())).rejects.toMatchObject(unavailable);
  });
});

describe.runIf(testStorageKind() === 'disk')('the directory', () => {
  let root: string;
  let disk: DirectoryStorage;
  beforeEach(() => {
    root = temporaryRoot();
    disk = createDirectoryStorage(root);
  });

  it('keeps a file under two levels of fan-out with nothing but the key in its path, and its mtime', async () => {
    const stored = await disk.put(webStream(patternBytes(1000)), { maxBytes: 10_000 });
    const file = path.join(root, stored.key.slice(0, 2), stored.key.slice(2, 4), stored.key);
    expect(fs.statSync(file).size).toBe(1000);
    expect(filesUnder(root)).toEqual([path.relative(root, file)]);
    const opened = (await disk.open(stored.key))!;
    expect(opened.mtime.getTime()).toBe(fs.statSync(file).mtime.getTime());
    await readAll(opened.stream());
    expect(descriptorsOn(file)).toBe(0); // closed once the stream ended
  });

  it('open does not follow a symlink planted in the store', async () => {
    const key = 'ab'.repeat(24);
    fs.mkdirSync(path.join(root, 'ab', 'ab'), { recursive: true });
    fs.symlinkSync('/etc/hostname', path.join(root, 'ab', 'ab', key));
    expect(await disk.open(key)).toBeNull();
    expect(await disk.delete(key)).toBe(false);
    expect(fs.lstatSync(path.join(root, 'ab', 'ab', key)).isSymbolicLink()).toBe(true);
  });

  it('an opened file streams its bytes even when deleted meanwhile', async () => {
    const bytes = patternBytes(200_000, 3);
    const stored = await disk.put(webStream(bytes), { maxBytes: 1_000_000 });
    const opened = (await disk.open(stored.key))!;
    await disk.delete(stored.key);
    expect(sameBytes(await readAll(opened.stream()), bytes)).toBe(true);
  });

  it('closes the file when the stream is cancelled, aborted (before or while it is read), or never read', async () => {
    const stored = await disk.put(webStream(patternBytes(500_000)), { maxBytes: 1_000_000 });
    const file = (await disk.resolveKey(stored.key))!;

    const cancelled = (await disk.open(stored.key))!;
    const reader = cancelled.stream().getReader();
    await reader.read();
    expect(descriptorsOn(file)).toBe(1);
    await reader.cancel();
    expect(descriptorsOn(file)).toBe(0);

    const aborted = (await disk.open(stored.key))!;
    const controller = new AbortController();
    const abortedReader = aborted.stream(undefined, controller.signal).getReader();
    await abortedReader.read();
    controller.abort();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(descriptorsOn(file)).toBe(0);

    const unread = (await disk.open(stored.key))!;
    expect(descriptorsOn(file)).toBe(1);
    await unread.close();
    expect(descriptorsOn(file)).toBe(0);

    // A signal already aborted when the stream is asked for (the client left while the file was opened).
    const late = (await disk.open(stored.key))!;
    expect(descriptorsOn(file)).toBe(1);
    const lateReader = late.stream(undefined, AbortSignal.abort()).getReader();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(descriptorsOn(file)).toBe(0);
    expect((await lateReader.read()).done).toBe(true);
  });

  it('lists stored keys and none of the junk a sweep must not mistake for stored files', async () => {
    const a = await disk.put(webStream(patternBytes(10)), { maxBytes: 100 });
    const b = await disk.put(webStream(patternBytes(20)), { maxBytes: 100 });
    fs.writeFileSync(path.join(root, 'README'), 'x');
    fs.mkdirSync(path.join(root, 'zz', 'zz'), { recursive: true });
    fs.writeFileSync(path.join(root, 'zz', 'zz', 'f'.repeat(48)), 'x'); // not a fan-out directory name
    fs.mkdirSync(path.join(root, 'ff', 'ee'), { recursive: true });
    fs.writeFileSync(path.join(root, 'ff', 'ee', '0'.repeat(48)), 'x'); // in the wrong fan-out directory
    fs.mkdirSync(path.join(root, '.partial'), { recursive: true });
    fs.writeFileSync(path.join(root, '.partial', 'c'.repeat(48)), 'x');

    const listed: string[] = [];
    for await (const entry of disk.list()) listed.push(entry.key);
    expect(listed.sort()).toEqual([a.key, b.key].sort());
  });

  it('lists nothing for a store that does not exist yet', async () => {
    const fresh = createDirectoryStorage(path.join(root, 'not-yet'));
    const listed: unknown[] = [];
    for await (const entry of fresh.list()) listed.push(entry);
    expect(listed).toEqual([]);
  });

  it('removes partial files older than the cut-off and keeps recent ones (another process may be writing)', async () => {
    const partials = path.join(root, '.partial');
    fs.mkdirSync(partials);
    const old = path.join(partials, 'a'.repeat(48));
    const recent = path.join(partials, 'b'.repeat(48));
    fs.writeFileSync(old, 'x');
    fs.writeFileSync(recent, 'y');
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    fs.utimesSync(old, twoHoursAgo, twoHoursAgo);
    expect(await disk.removeStalePartials(new Date(Date.now() - 3600_000))).toBe(1);
    expect(fs.existsSync(old)).toBe(false);
    expect(fs.existsSync(recent)).toBe(true);
  });

  it('resolves a stored key to its file', async () => {
    const stored = await disk.put(webStream(patternBytes(10)), { maxBytes: 100 });
    expect(await disk.resolveKey(stored.key)).toBe(path.join(root, stored.key.slice(0, 2), stored.key.slice(2, 4), stored.key));
  });

  it('refuses every hostile key', async () => {
    const stored = await disk.put(webStream(patternBytes(10)), { maxBytes: 100 });
    const real = (await disk.resolveKey(stored.key))!;

    // A symlink with a key's name and place, pointing outside the store.
    const planted = '5e'.repeat(24);
    fs.mkdirSync(path.join(root, '5e', '5e'), { recursive: true });
    fs.symlinkSync('/etc/hostname', path.join(root, '5e', '5e', planted));
    // A fan-out directory that is a symlink to a directory outside holding a real file of a key's name.
    // Its name must differ from the stored key's own fan-out directory (keys are random).
    const fan = stored.key.startsWith('7a') ? '7c' : '7a';
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'funil-outside-'));
    const escaped = fan + '7b' + '1'.repeat(44);
    fs.mkdirSync(path.join(outside, '7b'));
    fs.writeFileSync(path.join(outside, '7b', escaped), 'secret');
    fs.symlinkSync(outside, path.join(root, fan));
    // A directory where a key's file would be.
    const directory = 'd0'.repeat(24);
    fs.mkdirSync(path.join(root, 'd0', 'd0', directory), { recursive: true });

    const hostile = [
      '..',
      `../${stored.key}`,
      '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
      '%252e%252e%252fetc%252fpasswd',
      `${stored.key.slice(0, 2)}\\${stored.key.slice(2, 4)}\\${stored.key}`,
      '..\\..\\windows\\win.ini',
      real, // the absolute path of a stored file
      '/etc/passwd',
      `${stored.key}\0.png`,
      planted,
      escaped,
      'a'.repeat(10_000),
      stored.key + '0',
      stored.key.toUpperCase(),
      'f'.repeat(48), // the right shape, never stored
      directory,
      '',
    ];
    expect(hostile.length).toBeGreaterThanOrEqual(12);
    for (const key of hostile) {
      expect(await disk.resolveKey(key), JSON.stringify(key.slice(0, 80))).toBeNull();
      expect(await disk.open(key)).toBeNull();
    }
    // The real key still resolves: the refusals were about the keys, not a broken store.
    expect(await disk.resolveKey(stored.key)).toBe(real);
  });
});
