// Files sent as typed `File` arguments (REST field routes, /graphql) are spooled to temporary files as
// they arrive and handed over as standard Files read from disk (fs.openAsBlob), so a resolver's
// file.stream() or arrayBuffer() works as with any File while the request never holds the file whole.
// One spool per request: a directory `funil-form-*` under the temporary directory, made at the first
// file and removed with everything in it when the request finishes (`dispose`).
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FilePart } from './multipart-form.js';

export const SPOOL_PREFIX = 'funil-form-';

export class FileSpool {
  private dir?: Promise<string>;
  private count = 0;
  private disposed = false;
  private readonly writing = new Set<Promise<unknown>>();

  constructor(private readonly root: string) {}

  /** Writes the part to a new temporary file and returns it as a File (name and type from the part). */
  take(part: FilePart): Promise<File> {
    const taken = this.write(part);
    this.writing.add(taken);
    void taken.catch(() => {}).finally(() => this.writing.delete(taken));
    return taken;
  }

  private async write({ filename, mimeType, stream }: FilePart): Promise<File> {
    if (this.disposed) throw new Error('FileSpool used after dispose');
    this.dir ??= fs.promises.mkdir(this.root, { recursive: true }).then(() => fs.promises.mkdtemp(path.join(this.root, SPOOL_PREFIX)));
    const file = path.join(await this.dir, String(this.count++));
    // A part that fails half-way leaves a partial file: dispose removes it with the directory.
    await pipeline(stream, fs.createWriteStream(file, { flags: 'wx' }));
    return new File([await fs.openAsBlob(file)], filename, { type: mimeType });
  }

  /** Removes every spooled file (after any write still under way has stopped). Files taken can no longer be read. */
  async dispose(): Promise<void> {
    this.disposed = true;
    await Promise.allSettled([...this.writing]);
    const dir = await this.dir?.catch(() => undefined);
    if (dir) await fs.promises.rm(dir, { recursive: true, force: true });
  }
}
