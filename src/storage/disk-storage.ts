// The directory store (STORAGE_DIR, the default): a file is written to a partial file and renamed into
// place only when complete, so a stored key always names a whole file. Several server processes on one
// machine (or on a shared file system) can share the directory.
import { constants, type Dirent } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { FileMeter, isStorageKey, newStorageKey, type FileSource, type FileStorage, type OpenedFile, type StoredFile } from './storage.js';

const PARTIAL_DIR = '.partial';
const READ_CHUNK = 64 * 1024;

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
    await fs.mkdir(partialDir, { recursive: true });
    const handle = await fs.open(partial, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o640);
    const meter = new FileMeter(maxBytes);
    try {
      // for-await cancels a web stream (or returns an iterator) when the loop throws: the sender stops.
      for await (const chunk of source as AsyncIterable<Uint8Array>) {
        meter.take(chunk);
        for (let written = 0; written < chunk.byteLength; ) written += (await handle.write(chunk, written)).bytesWritten;
      }
      await handle.datasync();
      await handle.close();
      await fs.mkdir(path.dirname(target), { recursive: true });
      await fs.rename(partial, target);
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
    const file = await resolveKey(key);
    if (!file) return null;
    let handle: fs.FileHandle;
    try {
      // O_NOFOLLOW: a symlink swapped in after resolveKey is refused too.
      handle = await fs.open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (error) {
      if (isMissing(error) || (error as NodeJS.ErrnoException).code === 'ELOOP') return null;
      throw error;
    }
    try {
      const stats = await handle.stat();
      if (stats.isFile()) return openedFile(key, handle, stats.size, stats.mtime);
    } catch (error) {
      await handle.close().catch(() => {});
      throw error;
    }
    await handle.close();
    return null;
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

function openedFile(key: string, handle: fs.FileHandle, size: number, mtime: Date): OpenedFile {
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= handle.close().catch(() => {}));
  return {
    key,
    size,
    mtime,
    close,
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
