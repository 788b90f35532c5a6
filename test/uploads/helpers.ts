// Shared by the uploads tests: an app whose storage is a fresh temporary directory, real multipart
// bodies, and what is left on disk and in the database.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { useTestApp, type TestClient } from '../helpers/app.js';
import { filesUnder } from '../storage/files.js';

export { filesUnder, patternBytes, sameBytes, streamedForm } from '../storage/files.js';

/** A 1×1 PNG. */
export const PNG = Uint8Array.from(Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64'));

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
  /** STORAGE_DIR of this file's app. */
  root: string;
}

/** useTestApp with STORAGE_DIR in a new temporary directory. */
export function useUploadApp(): UploadApp {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'funil-uploads-'));
  return { api: useTestApp({ STORAGE_DIR: root }), root };
}

export function uploadForm(file: { bytes: Uint8Array<ArrayBuffer>; name?: string; type?: string } | null, fields: Record<string, string> = {}): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  if (file) form.append('file', new Blob([file.bytes], { type: file.type ?? 'application/octet-stream' }), file.name ?? 'arquivo.bin');
  return form;
}

/** Uploads a file over REST and returns the upload (fails the test on anything but 200). */
export async function upload(api: TestClient, key: string, file: { bytes: Uint8Array<ArrayBuffer>; name?: string; type?: string } = { bytes: PNG, name: 'foto.png' }, fields: Record<string, string> = {}) {
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
