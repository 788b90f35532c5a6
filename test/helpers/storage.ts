// Which store the storage tests run on: the directory by default, or an S3-compatible bucket (s3rver,
// started by the file itself) when TEST_STORAGE=s3 — vitest.config.ts runs the storage, upload and proxy
// test files once more in the project `s3` with it. A TestStore gives a test the app's settings for
// that store and a look inside it that does not go through the code under test.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { createDirectoryStorage } from '../../src/storage/disk-storage.js';
import { createS3Storage } from '../../src/storage/s3-storage.js';
import type { FileStorage } from '../../src/storage/storage.js';
import { filesUnder } from '../storage/files.js';
import { startS3, type TestS3 } from './s3.js';

export type StorageKind = 'disk' | 's3';

export function testStorageKind(): StorageKind {
  return process.env.TEST_STORAGE === 's3' ? 's3' : 'disk';
}

export interface TestStore {
  kind: StorageKind;
  /** The app's settings for this store (STORAGE_DIR, or STORAGE=s3 and S3_*), UPLOAD_TEMP_DIR beside it. */
  env: Record<string, string>;
  /** A FileStorage of its own on the same store. */
  storage: FileStorage;
  /** STORAGE_DIR (on s3, an empty directory nothing uses). */
  root: string;
  /** UPLOAD_TEMP_DIR: `<root>-tmp`. */
  tempDir: string;
  /** Everything the store holds, sorted: every file under the root (partial files too), or every object key. */
  contents(): Promise<string[]>;
  /** The bytes stored under `key`, or null. */
  read(key: string): Promise<Buffer | null>;
  /** Whether a file is stored under `key`. */
  has(key: string): Promise<boolean>;
  /** Moves the stored file's modification time `ms` into the past. */
  age(key: string, ms: number): Promise<void>;
  /** The bucket, on s3. */
  s3?: TestS3;
  close(): Promise<void>;
}

/** `root`: STORAGE_DIR (default a new temporary directory). */
export async function openTestStore(kind: StorageKind = testStorageKind(), root = newRoot()): Promise<TestStore> {
  const tempDir = `${root}-tmp`;
  const removeDirs = () => {
    for (const dir of [root, tempDir]) fs.rmSync(dir, { recursive: true, force: true });
  };
  if (kind === 'disk') {
    const pathOf = (key: string) => path.join(root, key.slice(0, 2), key.slice(2, 4), key);
    return {
      kind,
      env: { STORAGE_DIR: root, UPLOAD_TEMP_DIR: tempDir },
      storage: createDirectoryStorage(root),
      root,
      tempDir,
      contents: async () => filesUnder(root).sort(),
      read: async (key) => (fs.existsSync(pathOf(key)) ? fs.readFileSync(pathOf(key)) : null),
      has: async (key) => fs.existsSync(pathOf(key)),
      async age(key, ms) {
        const past = new Date(Date.now() - ms);
        fs.utimesSync(pathOf(key), past, past);
      },
      close: async () => removeDirs(),
    };
  }
  const s3 = await startS3();
  const storage = createS3Storage(s3.settings, s3.client);
  return {
    kind,
    env: { ...s3.env, STORAGE_DIR: root, UPLOAD_TEMP_DIR: tempDir },
    storage,
    root,
    tempDir,
    s3,
    contents: () => s3.objectKeys(),
    async read(key) {
      const opened = await storage.open(key);
      return opened && Buffer.from(await new Response(opened.stream()).arrayBuffer());
    },
    has: async (key) => (await s3.objectKeys()).includes(key),
    age: (key, ms) => s3.age(key, ms),
    async close() {
      await s3.stop();
      removeDirs();
    },
  };
}

function newRoot(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'funil-store-'));
}

/** Registers beforeAll/afterAll for a file-wide store (before anything registered after it) and returns it once open. */
export function useTestStore(kind?: StorageKind, root?: string): TestStore {
  const handle: { store?: TestStore } = {};
  beforeAll(async () => {
    handle.store = await openTestStore(kind, root);
  });
  afterAll(async () => {
    await handle.store?.close();
  });
  return new Proxy({} as TestStore, {
    get(_, prop) {
      if (!handle.store) throw new Error(`the test store is used before beforeAll opened it (${String(prop)})`);
      const value = (handle.store as any)[prop];
      return typeof value === 'function' ? value.bind(handle.store) : value;
    },
  });
}
