// Shared by the uploads tests: an app whose storage is a fresh temporary directory, real multipart
// bodies, and what is left on disk and in the database.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { useTestApp, type TestClient } from '../helpers/app.js';
import { migratedDataDir } from '../helpers/database.js';
import { useTestStore, type TestStore } from '../helpers/storage.js';
import { filesUnder } from '../storage/files.js';

export { filesUnder, patternBytes, sameBytes, streamedForm } from '../storage/files.js';

/** A 1×1 PNG. */
export const PNG = Uint8Array.from(
  Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64'),
);

/** The header of a WAV file followed by `samples` bytes of silence. */
export function wav(samples = 1000): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(44 + samples);
  const view = Buffer.from(bytes.buffer);
  view.write('RIFF', 0);
  view.writeUInt32LE(36 + samples, 4);
  view.write('WAVEfmt ', 8);
  view.writeUInt32LE(16, 16);
  view.writeUInt16LE(1, 20); // PCM
  view.writeUInt16LE(1, 22); // mono
  view.writeUInt32LE(8000, 24);
  view.writeUInt32LE(8000, 28);
  view.writeUInt16LE(1, 32);
  view.writeUInt16LE(8, 34);
  view.write('data', 36);
  view.writeUInt32LE(samples, 40);
  return bytes;
}

export const KEY_URL = /^http:\/\/funil\.test\/media\/proxy\/([0-9a-f]{48})$/;

export interface UploadApp {
  api: TestClient;
  /** Where this file's app stores files: a new directory, or a bucket (TEST_STORAGE=s3, test/helpers/storage.ts). */
  store: TestStore;
  /** STORAGE_DIR of this file's app (on a bucket, a directory nothing uses). */
  root: string;
  /** UPLOAD_TEMP_DIR of this file's app (`<root>-tmp`, made at the first file it spools). */
  tempDir: string;
}

/** useTestApp on the run's store (STORAGE_DIR in a new temporary directory, or a bucket), UPLOAD_TEMP_DIR beside it. */
export function useUploadApp(): UploadApp {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'funil-uploads-'));
  const store = useTestStore(undefined, root);
  return { api: useTestApp(() => store.env), store, root, tempDir: `${root}-tmp` };
}

export function uploadForm(
  file: { bytes: Uint8Array<ArrayBuffer>; name?: string; type?: string } | null,
  fields: Record<string, string> = {},
): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  if (file) form.append('file', new Blob([file.bytes], { type: file.type ?? 'application/octet-stream' }), file.name ?? 'arquivo.bin');
  return form;
}

/** Uploads a file over REST and returns the upload (fails the test on anything but 200). */
export async function upload(
  api: TestClient,
  key: string,
  file: { bytes: Uint8Array<ArrayBuffer>; name?: string; type?: string } = { bytes: PNG, name: 'foto.png' },
  fields: Record<string, string> = {},
) {
  const r = await api.rest('POST', '/backend/uploads', { key, body: uploadForm(file, fields) });
  if (r.status !== 200) throw new Error(`upload failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { id: string; file_url: string; [field: string]: any };
}

export const keyOf = (fileUrl: string) => KEY_URL.exec(fileUrl)![1];

/** The stored files under `root` (partial files included), without directories. */
export const storedFiles = (root: string) => filesUnder(root);

/** Where storage keeps a key (two levels of fan-out). */
export const pathOfKey = (root: string, key: string) => path.join(root, key.slice(0, 2), key.slice(2, 4), key);

/** Moves an upload's creation time `hours` into the past. */
export async function ageUpload(api: TestClient, id: string, hours: number) {
  await api.db.prisma.$executeRaw`UPDATE uploads SET created_at = now() - make_interval(hours => ${hours}::int) WHERE id = ${id}::uuid`;
}

export interface MeasuredApp {
  url: string;
  key: string;
  /** Its STORAGE_DIR, and where it spools files sent as `File` arguments. */
  storageDir: string;
  tempDir: string;
  /** The memory the app held while `requests` ran: growth of resident memory and of what JavaScript keeps alive. */
  measure(requests: () => Promise<void>): Promise<{ growth: number; heldGrowth: number }>;
  stop(): Promise<void>;
}

/**
 * The app in its own process (app-server.ts) on the same kind of database as `api` (and on `store`'s
 * bucket, if it is one), so that a test can measure the memory the server alone holds while it takes requests.
 */
export async function startMeasuredApp(api: TestClient, store?: TestStore): Promise<MeasuredApp> {
  const storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'funil-uploads-mem-'));
  const databaseUrl = (api.db as { url?: string }).url ?? '';
  // On PGlite its database is `${storageDir}-db/db`, already migrated.
  if (!databaseUrl) fs.renameSync(migratedDataDir('funil-uploads-mem-db-'), `${storageDir}-db`);
  // On a bucket, the app stores its files there (its STORAGE and S3_* settings; the directory stays empty).
  const { STORAGE_DIR: _dir, UPLOAD_TEMP_DIR: _temp, ...bucket } = store?.env ?? {};
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', 'test/uploads/app-server.ts', storageDir, databaseUrl], {
    env: { ...process.env, ...bucket, MALLOC_MMAP_THRESHOLD_: '16384' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const line = await Promise.race([
    new Promise<string>((resolve) => readline.createInterface({ input: child.stdout! }).once('line', resolve)),
    exited.then(() => Promise.reject(new Error('the measured app exited before serving'))),
  ]);
  const [url, key] = line.split(' ');
  return {
    url,
    key,
    storageDir,
    tempDir: `${storageDir}-tmp`,
    async measure(requests) {
      const started = await (await fetch(`${url}/memory?action=start`)).json();
      if (!started.gc) throw new Error('the measured app runs without --expose-gc');
      await requests();
      return (await (await fetch(`${url}/memory?action=peak`)).json()) as { growth: number; heldGrowth: number };
    },
    async stop() {
      child.kill();
      await exited;
      for (const dir of [storageDir, `${storageDir}-db`, `${storageDir}-tmp`]) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
