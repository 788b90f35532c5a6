// Streamed multipart/form-data for file endpoints: text fields are collected under small limits, and the
// one file part flows from the request straight into storage as it arrives (busboy parses; backpressure
// runs from the disk back to the socket), so a 10 MB upload never sits in memory. Past the limit the
// request fails with 413 at once, the partial file is removed and the rest of the body is not read.
import busboy from 'busboy';
import { AppError, invalidInput } from '../errors.js';
import { MAX_FILE_BYTES, tooLarge } from '../http/body.js';
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

const malformed = () => invalidInput('Corpo multipart/form-data inválido');

/**
 * Reads a multipart/form-data request, storing its file part in `storage`. Throws 400 INVALID_INPUT for a
 * malformed form, a second file, a file under another field name or fields over their limits, and 413
 * PAYLOAD_TOO_LARGE past a size limit; a thrown error never leaves a file behind.
 */
export async function readMultipartUpload(request: Request, storage: FileStorage, options: MultipartOptions = {}): Promise<MultipartUpload> {
  const { fileField = 'file', maxFileBytes = MAX_FILE_BYTES, maxFields = 20, maxFieldBytes = 64 * 1024 } = options;
  const maxBodyBytes = options.maxBodyBytes ?? maxFileBytes + 256 * 1024;
  const contentType = request.headers.get('content-type') ?? '';
  if (!/^multipart\/form-data\s*;/i.test(contentType) || !request.body) throw invalidInput('Envie o formulário como multipart/form-data');
  if (Number(request.headers.get('content-length') ?? 0) > maxBodyBytes) {
    // Cancelled through a reader: on Node's server that detaches the request from its socket without
    // closing it (stream.cancel() on @whatwg-node's request closes the socket and the 413 is lost).
    void request.body.getReader().cancel().catch(() => {});
    throw tooLarge();
  }

  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { 'content-type': contentType },
      // File names sent by browsers and fetch are raw UTF-8, not latin1.
      defParamCharset: 'utf8',
      limits: { fields: maxFields, fieldSize: maxFieldBytes, fieldNameSize: 200, files: 1, parts: maxFields + 1, headerPairs: 20 },
    });
  } catch {
    throw malformed();
  }

  let failure: unknown;
  let interrupt: (() => void) | undefined;
  const fail = (error: unknown) => {
    if (failure !== undefined) return;
    failure = error;
    interrupt?.();
  };
  /**
   * `step`, or undefined as soon as the upload fails. Not Promise.race against one long-pending failure
   * promise: every race leaves a reaction on it that keeps the race's result alive (nodejs/node#17469),
   * and the results here are the body's chunks, so the whole body would stay in memory until the end.
   */
  const untilFailure = <T>(step: Promise<T>): Promise<T | undefined> => {
    if (failure !== undefined) return Promise.resolve(undefined);
    return new Promise<T | undefined>((resolve, reject) => {
      interrupt = () => resolve(undefined);
      step.then(resolve, reject);
    }).finally(() => (interrupt = undefined));
  };

  const fields = new Map<string, string>();
  let stored: Promise<UploadedFile | null> = Promise.resolve(null);

  parser.on('field', (name, value, info) => {
    if (info.nameTruncated || info.valueTruncated) return fail(invalidInput(`O campo ${name.slice(0, 100)} excede ${maxFieldBytes} bytes`));
    if (fields.has(name)) return fail(invalidInput(`O campo ${name} foi enviado mais de uma vez`));
    if (name.includes('\0') || value.includes('\0')) return fail(invalidInput(`O campo ${name.replace(/\0/g, '')} contém caracteres inválidos`));
    fields.set(name, value);
  });
  parser.on('file', (name, stream, info) => {
    const filename = info.filename ?? '';
    // A browser sends a part with an empty file name for a file input left blank: that is no file.
    if (failure !== undefined || filename === '') return void stream.resume();
    if (name !== fileField) {
      stream.resume();
      return fail(invalidInput(`Envie o arquivo no campo ${fileField}`));
    }
    if (filename.includes('\0')) {
      stream.resume();
      return fail(invalidInput('Nome de arquivo inválido'));
    }
    stored = storage.put(stream, { maxBytes: maxFileBytes }).then(
      (file) => ({ ...file, filename, declaredType: info.mimeType }),
      (error) => {
        // Over the limit (413) or the disk failing (500) as they are; the part itself breaking is the form's fault.
        fail(error instanceof AppError || (error as NodeJS.ErrnoException).syscall ? error : malformed());
        return null;
      },
    );
  });
  parser.on('filesLimit', () => fail(invalidInput('Envie apenas um arquivo')));
  parser.on('fieldsLimit', () => fail(invalidInput(`O formulário aceita no máximo ${maxFields} campos`)));
  parser.on('partsLimit', () => fail(invalidInput(`O formulário aceita no máximo ${maxFields} campos`)));
  parser.on('error', () => fail(malformed()));
  const parsed = new Promise<void>((resolve) => parser.once('close', resolve));

  // Pump the body into the parser one chunk at a time; the parser acknowledges a chunk only once the
  // file part has taken it, so a slow disk slows the reading of the socket.
  const reader = request.body.getReader();
  let received = 0;
  let bodyDone = false;
  // A read fails when the client breaks off (400), or with the server's own refusal as an AppError
  // (the body deadline's 408), which stays what it is.
  const broken = (error: unknown) => fail(error instanceof AppError ? error : invalidInput('O envio do arquivo foi interrompido'));
  while (failure === undefined) {
    const read = await untilFailure(reader.read().catch(broken));
    if (!read || failure !== undefined) break;
    if (read.done) {
      bodyDone = true;
      parser.end();
      break;
    }
    received += read.value.byteLength;
    if (received > maxBodyBytes) fail(tooLarge());
    else await untilFailure(new Promise<void>((resolve) => parser.write(read.value, () => resolve())));
  }
  await untilFailure(parsed);
  if (failure === undefined) {
    // The parser is done when the last part ended; the file may still be on its way to disk.
    const file = await stored;
    if (failure === undefined) return { fields: Object.fromEntries(fields), file };
  }

  // Stop everything: a file part still arriving errors (put removes its partial file), the rest of the
  // body is not read, and a file already stored is deleted.
  parser.destroy(failure as Error);
  if (!bodyDone) void reader.cancel().catch(() => {});
  const file = await stored;
  if (file) await storage.delete(file.key);
  throw failure;
}
