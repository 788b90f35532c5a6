// Helpers for the storage tests (and the uploads tests): temporary roots, what is on disk under them,
// and bodies to send.
import { randomBytes } from 'node:crypto';
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
  return Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength).equals(
    Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength),
  );
}

/**
 * A multipart body built by hand and streamed (no Content-Length): text fields (default a `type` field),
 * then `fileBytes` of file content (field `file`, name `grande.bin` by default) pulled as the socket
 * takes it. `stallAfter` holds the upload open after that many file bytes, as a client that stopped
 * sending would. `state` tells how much was sent and whether it all was.
 */
export function streamedForm(
  fileBytes: number,
  options: { stallAfter?: number; fields?: [string, string][]; fileField?: string; fileName?: string } = {},
) {
  const { fields = [['type', 'media']], fileField = 'file', fileName = 'grande.bin' } = options;
  const boundary = `funil-${randomBytes(8).toString('hex')}`;
  const opening = new TextEncoder().encode(
    fields.map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`).join('') +
      `--${boundary}\r\nContent-Disposition: form-data; name="${fileField}"; filename="${fileName}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const closing = new TextEncoder().encode(`\r\n--${boundary}--\r\n`);
  const chunk = new Uint8Array(64 * 1024).fill(42);
  const state = { sent: 0, finished: false };
  let stalled: () => void = () => {};
  const body = new ReadableStream<Uint8Array>({
    start: (controller) => controller.enqueue(opening),
    async pull(controller) {
      if (options.stallAfter !== undefined && state.sent >= options.stallAfter) {
        await new Promise<void>((resolve) => (stalled = resolve));
        return;
      }
      if (state.sent >= fileBytes) {
        controller.enqueue(closing);
        controller.close();
        state.finished = true;
        return;
      }
      const piece = chunk.subarray(0, Math.min(chunk.byteLength, fileBytes - state.sent));
      state.sent += piece.byteLength;
      controller.enqueue(piece);
    },
    cancel: () => stalled(),
  });
  return { body, state, contentType: `multipart/form-data; boundary=${boundary}` };
}
