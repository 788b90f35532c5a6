// The directory storage on real files: round trips, the size limit leaving nothing behind, failures
// mid-stream, listing for the orphan sweep, stale partial files, and keys that are not keys.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { createDirectoryStorage, HEAD_BYTES, type FileStorage } from '../../src/storage/storage.js';
import { countingSource, descriptorsOn, filesUnder, patternBytes, sameBytes, temporaryRoot } from './files.js';

let root: string;
let storage: FileStorage;
beforeEach(() => {
  root = temporaryRoot();
  storage = createDirectoryStorage(root);
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

describe('put, open, delete', () => {
  it('stores a web stream and reads it back whole and by range', async () => {
    const bytes = patternBytes(300_000);
    const stored = await storage.put(webStream(bytes), { maxBytes: 1_000_000 });
    expect(stored.key).toMatch(/^[0-9a-f]{48}$/);
    expect(stored.size).toBe(300_000);
    expect(stored.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(sameBytes(stored.head, bytes.slice(0, HEAD_BYTES))).toBe(true);
    // Two levels of fan-out, and nothing but the key in the path.
    const file = path.join(root, stored.key.slice(0, 2), stored.key.slice(2, 4), stored.key);
    expect(fs.statSync(file).size).toBe(300_000);
    expect(filesUnder(root)).toEqual([path.relative(root, file)]);

    const opened = (await storage.open(stored.key))!;
    expect(opened.size).toBe(300_000);
    expect(opened.mtime.getTime()).toBe(fs.statSync(file).mtime.getTime());
    expect(sameBytes(await readAll(opened.stream()), bytes)).toBe(true);
    expect(descriptorsOn(file)).toBe(0); // closed once the stream ended

    const again = (await storage.open(stored.key))!;
    expect(sameBytes(await readAll(again.stream({ start: 70_000, end: 200_000 })), bytes.slice(70_000, 200_001))).toBe(true);

    expect(await storage.delete(stored.key)).toBe(true);
    expect(await storage.open(stored.key)).toBeNull();
    expect(await storage.delete(stored.key)).toBe(false);
    expect(filesUnder(root)).toEqual([]);
  });

  it('stores an async iterable, a small file whole in its head, and an empty file', async () => {
    const small = await storage.put((async function* () {
      yield new TextEncoder().encode('olá ');
      yield new TextEncoder().encode('mundo');
    })(), { maxBytes: 100 });
    expect(small.size).toBe(Buffer.byteLength('olá mundo'));
    expect(new TextDecoder().decode(small.head)).toBe('olá mundo');
    expect(await new Response((await storage.open(small.key))!.stream()).text()).toBe('olá mundo');

    const empty = await storage.put((async function* () {})(), { maxBytes: 100 });
    expect(empty.size).toBe(0);
    expect(empty.head.byteLength).toBe(0);
    const opened = (await storage.open(empty.key))!;
    expect(await readAll(opened.stream())).toEqual(new Uint8Array());
    expect(small.key).not.toBe(empty.key);
  });

  it('accepts exactly maxBytes', async () => {
    const { source } = countingSource(1_000_000, 65_536);
    expect((await storage.put(source, { maxBytes: 1_000_000 })).size).toBe(1_000_000);
  });

  it('refuses a stream past maxBytes with 413 as soon as it passes, stops pulling, and leaves no file', async () => {
    const { source, state } = countingSource(50 * 1024 * 1024, 64 * 1024);
    const error = await storage.put(source, { maxBytes: 1_000_000 }).catch((e) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error.kind).toBe('PAYLOAD_TOO_LARGE');
    expect(error.status).toBe(413);
    // The chunk that crossed the limit was the last one pulled, and the source was told to stop.
    expect(state.pulled).toBe(Math.ceil(1_000_001 / 65_536) * 65_536);
    expect(state.returned).toBe(true);
    expect(filesUnder(root)).toEqual([]);
  });

  it('cancels a web stream that passes the limit', async () => {
    let cancelled = false;
    let pulls = 0;
    const source = new ReadableStream<Uint8Array>({
      pull: (controller) => void (pulls++, controller.enqueue(new Uint8Array(1000))),
      cancel: () => void (cancelled = true),
    });
    await expect(storage.put(source, { maxBytes: 10_500 })).rejects.toMatchObject({ kind: 'PAYLOAD_TOO_LARGE' });
    expect(cancelled).toBe(true);
    expect(pulls).toBeLessThan(15);
    expect(filesUnder(root)).toEqual([]);
  });

  it('removes the partial file when the source fails mid-stream', async () => {
    const failing = (async function* () {
      yield new Uint8Array(100_000);
      throw new Error('connection reset');
    })();
    await expect(storage.put(failing, { maxBytes: 1_000_000 })).rejects.toThrow('connection reset');
    expect(filesUnder(root)).toEqual([]);
  });

  it('open does not follow a symlink planted in the store', async () => {
    const key = 'ab'.repeat(24);
    fs.mkdirSync(path.join(root, 'ab', 'ab'), { recursive: true });
    fs.symlinkSync('/etc/hostname', path.join(root, 'ab', 'ab', key));
    expect(await storage.open(key)).toBeNull();
    expect(await storage.delete(key)).toBe(false);
    expect(fs.lstatSync(path.join(root, 'ab', 'ab', key)).isSymbolicLink()).toBe(true);
  });

  it('an opened file streams its bytes even when deleted meanwhile', async () => {
    const bytes = patternBytes(200_000, 3);
    const stored = await storage.put(webStream(bytes), { maxBytes: 1_000_000 });
    const opened = (await storage.open(stored.key))!;
    await storage.delete(stored.key);
    expect(sameBytes(await readAll(opened.stream()), bytes)).toBe(true);
  });

  it('closes the file when the stream is cancelled, aborted, or never read', async () => {
    const stored = await storage.put(webStream(patternBytes(500_000)), { maxBytes: 1_000_000 });
    const file = (await storage.resolveKey(stored.key))!;

    const cancelled = (await storage.open(stored.key))!;
    const reader = cancelled.stream().getReader();
    await reader.read();
    expect(descriptorsOn(file)).toBe(1);
    await reader.cancel();
    expect(descriptorsOn(file)).toBe(0);

    const aborted = (await storage.open(stored.key))!;
    const controller = new AbortController();
    const abortedReader = aborted.stream(undefined, controller.signal).getReader();
    await abortedReader.read();
    controller.abort();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(descriptorsOn(file)).toBe(0);

    const unread = (await storage.open(stored.key))!;
    expect(descriptorsOn(file)).toBe(1);
    await unread.close();
    expect(descriptorsOn(file)).toBe(0);
  });
});

describe('list and stale partial files', () => {
  it('lists stored keys with their mtime and nothing else', async () => {
    const a = await storage.put(webStream(patternBytes(10)), { maxBytes: 100 });
    const b = await storage.put(webStream(patternBytes(20)), { maxBytes: 100 });
    // Junk a sweep must not mistake for stored files.
    fs.writeFileSync(path.join(root, 'README'), 'x');
    fs.mkdirSync(path.join(root, 'zz', 'zz'), { recursive: true });
    fs.writeFileSync(path.join(root, 'zz', 'zz', 'f'.repeat(48)), 'x'); // not a fan-out directory name
    fs.mkdirSync(path.join(root, 'ff', 'ee'), { recursive: true });
    fs.writeFileSync(path.join(root, 'ff', 'ee', '0'.repeat(48)), 'x'); // in the wrong fan-out directory
    fs.mkdirSync(path.join(root, '.partial'), { recursive: true });
    fs.writeFileSync(path.join(root, '.partial', 'c'.repeat(48)), 'x');

    const listed: { key: string; mtime: Date }[] = [];
    for await (const entry of storage.list()) listed.push(entry);
    expect(listed.map((e) => e.key).sort()).toEqual([a.key, b.key].sort());
    for (const entry of listed) expect(entry.mtime).toBeInstanceOf(Date);
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
    expect(await storage.removeStalePartials(new Date(Date.now() - 3600_000))).toBe(1);
    expect(fs.existsSync(old)).toBe(false);
    expect(fs.existsSync(recent)).toBe(true);
  });
});

describe('resolveKey', () => {
  it('resolves a stored key to its file', async () => {
    const stored = await storage.put(webStream(patternBytes(10)), { maxBytes: 100 });
    expect(await storage.resolveKey(stored.key)).toBe(path.join(root, stored.key.slice(0, 2), stored.key.slice(2, 4), stored.key));
  });

  it('refuses every hostile key', async () => {
    const stored = await storage.put(webStream(patternBytes(10)), { maxBytes: 100 });
    const real = (await storage.resolveKey(stored.key))!;

    // A symlink with a key's name and place, pointing outside the store.
    const planted = '5e'.repeat(24);
    fs.mkdirSync(path.join(root, '5e', '5e'), { recursive: true });
    fs.symlinkSync('/etc/hostname', path.join(root, '5e', '5e', planted));
    // A fan-out directory that is a symlink to a directory outside holding a real file of a key's name.
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'funil-outside-'));
    const escaped = '7a7b' + '1'.repeat(44);
    fs.mkdirSync(path.join(outside, '7b'));
    fs.writeFileSync(path.join(outside, '7b', escaped), 'secret');
    fs.symlinkSync(outside, path.join(root, '7a'));
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
      expect(await storage.resolveKey(key), JSON.stringify(key.slice(0, 80))).toBeNull();
      expect(await storage.open(key)).toBeNull();
    }
    // The real key still resolves: the refusals were about the keys, not a broken store.
    expect(await storage.resolveKey(stored.key)).toBe(real);
  });
});
