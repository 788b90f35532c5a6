// Streamed multipart/form-data for file endpoints (POST /backend/uploads): text fields are collected under
// small limits, and the one file part flows from the request straight into storage as it arrives
// (readMultipartForm parses; backpressure runs from the disk back to the socket), so a 10 MB upload never
// sits in memory. Past the file limit the request fails with 413 at once, the partial file is removed and
// the rest of the body is not read.
import { invalidInput, invalidField } from '../errors.js';
import { MAX_FILE_BYTES } from '../config.js';
import { readMultipartForm } from './multipart-form.js';
import type { FileStorage, StoredFile } from './storage.js';

export interface UploadedFile extends StoredFile {
  /** The client's file name, without any path. */
  filename: string;
  /** The type the client declared for the part; judge the content with sniffContentType(head) instead. */
  declaredType: string;
}

export interface MultipartUpload {
  fields: Record<string, string>;
  /** Null when the form carries no file (or an empty file input). */
  file: UploadedFile | null;
}

export interface MultipartOptions {
  /** The form field that carries the file (default `file`); a file under any other name is refused. */
  fileField?: string;
  /** Default MAX_FILE_BYTES (10 MB); more → 413. */
  maxFileBytes?: number;
  /** Text fields, default 20; more → 400. */
  maxFields?: number;
  /** Bytes per text field, default 64 KiB; more → 400. */
  maxFieldBytes?: number;
  /** The whole body, default the file limit plus 256 KiB; more → 413. */
  maxBodyBytes?: number;
}

/**
 * Reads a multipart/form-data request, storing its file part in `storage`. Throws 400 INVALID_INPUT for a
 * malformed form, a second file, a file under another field name or fields over their limits, and 413
 * PAYLOAD_TOO_LARGE past a size limit; a thrown error never leaves a file behind.
 */
export async function readMultipartUpload(
  request: Request,
  storage: FileStorage,
  options: MultipartOptions = {},
): Promise<MultipartUpload> {
  const { fileField = 'file', maxFileBytes = MAX_FILE_BYTES, maxFields = 20, maxFieldBytes = 64 * 1024 } = options;
  const maxBodyBytes = options.maxBodyBytes ?? maxFileBytes + 256 * 1024;
  const fields = new Map<string, string>();
  let file: UploadedFile | null = null;
  try {
    await readMultipartForm(
      request,
      { maxFields, maxFieldBytes, maxFiles: 1, maxBodyBytes },
      {
        field(name, value) {
          if (fields.has(name)) throw invalidField(name, 'foi enviado mais de uma vez');
          fields.set(name, value);
        },
        async file({ field, filename, mimeType, stream }) {
          // A browser sends a part with an empty file name for a file input left blank: that is no file.
          if (filename === '') return void stream.resume();
          if (field !== fileField) throw invalidInput(`Envie o arquivo no campo ${fileField}`);
          // put removes its partial file when the stream fails or passes the limit (413).
          file = { ...(await storage.put(stream, { maxBytes: maxFileBytes })), filename, declaredType: mimeType };
        },
      },
    );
  } catch (error) {
    // A file already stored when the rest of the form failed.
    const stored = file as UploadedFile | null;
    if (stored) await storage.delete(stored.key);
    throw error;
  }
  return { fields: Object.fromEntries(fields), file };
}
