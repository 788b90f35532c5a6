// Helpers for the storage tests: temporary roots and what is on disk under them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function temporaryRoot(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'funil-storage-'));
}

/** Every non-directory entry under `dir` (files, partial files, symlinks), relative to it. */
export function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((e) => !e.isDirectory())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

/** Descriptors this process holds on `file` (Linux /proc), to prove a file was closed. */
export function descriptorsOn(file: string): number {
  let count = 0;
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      if (fs.readlinkSync(`/proc/self/fd/${fd}`) === file) count++;
    } catch {
      // closed while listing
    }
  }
  return count;
}

/** `size` bytes of a repeating, position-dependent pattern, so a misplaced byte shows. */
export function patternBytes(size: number, seed = 0): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + seed + (i >> 8)) & 0xff;
  return bytes;
}

/** An async source of `total` bytes in `chunk`-sized pieces, counting what was pulled. */
export function countingSource(total: number, chunk = 64 * 1024) {
  const state = { pulled: 0, finished: false, returned: false };
  async function* source() {
    try {
      while (state.pulled < total) {
        const size = Math.min(chunk, total - state.pulled);
        state.pulled += size;
        yield new Uint8Array(size).fill(7);
      }
      state.finished = true;
    } finally {
      state.returned = !state.finished;
    }
  }
  return { source: source(), state };
}

/** Byte equality without vitest's element-by-element diff (slow on large arrays). */
export function sameBytes(actual: Uint8Array, expected: Uint8Array): boolean {
  return Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength).equals(Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength));
}
