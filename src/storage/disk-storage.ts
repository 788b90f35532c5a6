// The directory store (STORAGE_DIR, the default): a file is written to a partial file and renamed into
// place only when complete, so a stored key always names a whole file. Several server processes on one
// machine (or on a shared file system) can share the directory.
import { constants, type Dirent } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { FileMeter, isStorageKey, newStorageKey, type FileSource, type FileStorage, type OpenedFile, type StoredFile } from './storage.js';

const PARTIAL_DIR = '.partial';
/** Bytes per read when serving: a file up to this size (most media) is one read and one chunk. */
const READ_CHUNK = 128 * 1024;
/**
 * What a put buffers while a write is under way: the chunks that arrive meanwhile go to disk in one
 * writev, and the socket keeps flowing instead of waiting for each write (a write per chunk, awaited
 * in turn, ran a 1 MB upload at a third of plain Node's speed).
 */
const WRITE_BUFFER = 256 * 1024;
/** Bytes written between the fdatasyncs a put starts while its file is still arriving. */
const SYNC_STEP = 2 * 1024 * 1024;

/** The directory store also answers where a key's file is (open and delete go through it; tests look at the file). */
export interface DirectoryStorage extends FileStorage {
  /**
   * The path of the stored file `untrusted` names, or null unless it is exactly a key this store generates
   * and that key is a regular file (not a symlink) whose real path lies under the root.
   */
  resolveKey(untrusted: string): Promise<string | null>;
}

export function createDirectoryStorage(root: string): DirectoryStorage {
  root = path.resolve(root);
  const partialDir = path.join(root, PARTIAL_DIR);
  /** Two levels of fan-out keep directories small: ab/cd/abcd…. */
  const pathOf = (key: string) => path.join(root, key.slice(0, 2), key.slice(2, 4), key);

  async function put(source: FileSource, { maxBytes }: { maxBytes: number }): Promise<StoredFile> {
    const key = newStorageKey();
    const target = pathOf(key);
    const partial = path.join(partialDir, key);
    // The directories are made when missing, not checked before every file (two syscalls each).
    const handle = await orMakeDirectory(partialDir, () =>
      fs.open(partial, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o640),
    );
    const meter = new FileMeter(maxBytes);
    try {
      await writeFrom(source, handle, meter);
      await handle.datasync();
      await handle.close();
      await orMakeDirectory(path.dirname(target), () => fs.rename(partial, target));
    } catch (error) {
      await handle.close().catch(() => {});
      await fs.rm(partial, { force: true });
      throw error;
    }
    return meter.stored(key);
  }

  let realRoot: string | undefined;
  async function resolveKey(untrusted: string): Promise<string | null> {
    // The shape check alone refuses `..`, encodings, separators, NUL and overlong names.
    if (!isStorageKey(untrusted)) return null;
    const file = pathOf(untrusted);
    try {
      if (!(await fs.lstat(file)).isFile()) return null;
      realRoot ??= await fs.realpath(root);
      // A fan-out directory replaced by a symlink would lead elsewhere: the real path must be the expected one.
      const expected = path.join(realRoot, path.relative(root, file));
      return (await fs.realpath(file)) === expected ? file : null;
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async function open(key: string): Promise<OpenedFile | null> {
    // The shape check alone refuses `..`, encodings, separators, NUL and overlong names.
    if (!isStorageKey(key)) return null;
    const file = pathOf(key);
    let handle: fs.FileHandle;
    try {
      // O_NOFOLLOW: a symlink in place of the file is refused.
      handle = await fs.open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (error) {
      if (isMissing(error) || (error as NodeJS.ErrnoException).code === 'ELOOP') return null;
      throw error;
    }
    try {
      const stats = await handle.stat();
      if (stats.isFile() && (await opensUnderRoot(file, handle))) return openedFile(key, handle, stats.size, stats.mtime);
    } catch (error) {
      await handle.close().catch(() => {});
      throw error;
    }
    await handle.close();
    return null;
  }

  /**
   * Whether the opened file is the one under the root (a fan-out directory replaced by a symlink would
   * lead elsewhere): the descriptor's own path where the system shows it (/proc/self/fd, one syscall
   * for the file actually opened), else the real path of `file`.
   */
  async function opensUnderRoot(file: string, handle: fs.FileHandle): Promise<boolean> {
    realRoot ??= await fs.realpath(root);
    const expected = path.join(realRoot, path.relative(root, file));
    const opened = await fs.readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
    return (opened ?? (await fs.realpath(file))) === expected;
  }

  async function remove(key: string): Promise<boolean> {
    const file = await resolveKey(key);
    if (!file) return false;
    try {
      await fs.unlink(file);
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }

  async function* list(): AsyncIterable<{ key: string; mtime: Date }> {
    for (const first of await directories(root)) {
      for (const second of await directories(path.join(root, first))) {
        const dir = path.join(root, first, second);
        for (const entry of await entries(dir)) {
          // Only regular files named like a key in their own fan-out directory are stored files.
          if (!entry.isFile() || !isStorageKey(entry.name) || entry.name.slice(0, 4) !== first + second) continue;
          try {
            yield { key: entry.name, mtime: (await fs.lstat(path.join(dir, entry.name))).mtime };
          } catch (error) {
            if (!isMissing(error)) throw error; // deleted while listing
          }
        }
      }
    }
  }

  async function removeStalePartials(before: Date): Promise<number> {
    let removed = 0;
    for (const entry of await entries(partialDir)) {
      const file = path.join(partialDir, entry.name);
      try {
        if ((await fs.lstat(file)).mtime < before) {
          await fs.rm(file, { force: true });
          removed++;
        }
      } catch (error) {
        if (!isMissing(error)) throw error;
      }
    }
    return removed;
  }

  return { put, open, delete: remove, list, removeStalePartials, resolveKey };
}

/**
 * Writes `source` to `handle`, each chunk metered first (413 before it is written). Chunks that arrive
 * while a write is under way queue up (up to WRITE_BUFFER) and go to disk together in one writev.
 * Returns, or throws, only once no write is under way.
 */
async function writeFrom(source: FileSource, handle: fs.FileHandle, meter: FileMeter): Promise<void> {
  let queue: Uint8Array[] = [];
  let queued = 0;
  let writing: Promise<void> | undefined;
  let syncing: Promise<void> | undefined;
  let unsynced = 0;
  let failure: { error: unknown } | undefined;
  const drain = async () => {
    try {
      while (queue.length && !failure) {
        const batch = queue;
        const bytes = queued;
        queue = [];
        queued = 0;
        await writeAll(handle, batch);
        unsynced += bytes;
        // What is written so far goes to disk while the rest arrives, so the fdatasync that makes the
        // file durable (before its record) has little left to flush: 21 ms of a 10 MB upload's 110 otherwise.
        if (unsynced >= SYNC_STEP && !syncing) {
          unsynced = 0;
          syncing = handle
            .datasync()
            .catch((error: unknown) => void (failure ??= { error }))
            .finally(() => (syncing = undefined));
        }
      }
    } catch (error) {
      failure = { error };
    } finally {
      writing = undefined;
    }
  };
  const settled = async () => {
    while (writing || syncing) await (writing ?? syncing);
  };
  try {
    // for-await cancels a web stream (or returns an iterator) when the loop throws: the sender stops.
    for await (const chunk of source as AsyncIterable<Uint8Array>) {
      if (failure) throw failure.error;
      meter.take(chunk);
      queue.push(chunk);
      queued += chunk.byteLength;
      writing ??= drain();
      if (queued >= WRITE_BUFFER) await writing;
    }
    await settled();
    if (failure) throw failure.error;
  } catch (error) {
    await settled();
    throw error;
  }
}

async function writeAll(handle: fs.FileHandle, chunks: Uint8Array[]): Promise<void> {
  const rest = [...chunks]; // a copy: the short-write loop below consumes it
  while (rest.length) {
    let { bytesWritten } = await handle.writev(rest);
    // A short write (rare on a regular file): carry on from where it stopped.
    while (rest.length && bytesWritten >= rest[0].byteLength) bytesWritten -= rest.shift()!.byteLength;
    if (bytesWritten > 0) rest[0] = rest[0].subarray(bytesWritten);
  }
}

/** Runs `fn`; when it fails because `dir` is missing, makes it and runs `fn` again. */
async function orMakeDirectory<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    await fs.mkdir(dir, { recursive: true });
    return fn();
  }
}

function openedFile(key: string, handle: fs.FileHandle, size: number, mtime: Date): OpenedFile {
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= handle.close().catch(() => {}));
  return {
    key,
    size,
    mtime,
    close,
    async read(range) {
      try {
        const buffer = Buffer.allocUnsafe(range.end + 1 - range.start);
        let filled = 0;
        while (filled < buffer.length) {
          const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, range.start + filled);
          if (bytesRead === 0) throw new Error(`Arquivo ${key} terminou antes do esperado`);
          filled += bytesRead;
        }
        return buffer;
      } finally {
        await close();
      }
    },
    stream(range = { start: 0, end: size - 1 }, signal) {
      let position = range.start;
      // A signal aborted already (the client left while the file was being opened) fires no event: the
      // file is closed now, or it would wait for the garbage collector (DEP0137).
      if (signal?.aborted) {
        void close();
        return new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
      }
      const abort = () => void close();
      signal?.addEventListener('abort', abort, { once: true });
      const finish = () => {
        signal?.removeEventListener('abort', abort);
        return close();
      };
      return new ReadableStream<Uint8Array>(
        {
          async pull(controller) {
            const length = Math.min(READ_CHUNK, range.end + 1 - position);
            if (length <= 0 || signal?.aborted) {
              await finish();
              controller.close();
              return;
            }
            try {
              const buffer = new Uint8Array(length);
              const { bytesRead } = await handle.read(buffer, 0, length, position);
              // Stored files never change; a short read means the disk lied, not that the file shrank legitimately.
              if (bytesRead === 0) throw new Error(`Arquivo ${key} terminou antes do esperado`);
              position += bytesRead;
              controller.enqueue(buffer.subarray(0, bytesRead));
              // The last bytes: close now rather than on one more pull (a small file is one read).
              if (position > range.end) {
                await finish();
                controller.close();
              }
            } catch (error) {
              await finish();
              controller.error(error);
            }
          },
          cancel: () => finish(),
        },
        { highWaterMark: 0 },
      );
    },
  };
}

async function entries(dir: string): Promise<Dirent[]> {
  try {
    return await fs.readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (isMissing(error)) return [];
    throw error;
  }
}

/** Fan-out directories only (two hex characters, real directories, not symlinks). */
async function directories(dir: string): Promise<string[]> {
  return (await entries(dir)).filter((e) => e.isDirectory() && /^[0-9a-f]{2}$/.test(e.name)).map((e) => e.name);
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
