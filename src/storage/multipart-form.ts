// The one multipart/form-data reader of the service (busboy): text fields under limits, and each file
// part handed to a consumer as a stream while it arrives, so no file ever sits whole in memory. Its
// consumers: readMultipartUpload (the part flows into storage) and FileSpool (the part goes to a
// temporary file, for typed `File` arguments on REST field routes and /graphql). Backpressure runs from
// the consumer back to the socket; past the body limit the request fails with 413 at once and the rest
// of the body is not read.
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { AppError, invalidInput, invalidField, tooLarge } from '../errors.js';

export interface FormLimits {
  /** Text fields; more → 400. */
  maxFields: number;
  /** Bytes per text field; more → 400. */
  maxFieldBytes: number;
  /** File parts; more → 400. */
  maxFiles: number;
  /** The whole body; more → 413, by Content-Length or as soon as the stream passes it. */
  maxBodyBytes: number;
}

export interface FilePart {
  /** The form field's name. */
  field: string;
  /** The client's file name ('' for a file input left empty). */
  filename: string;
  /** The type the client declared for the part. */
  mimeType: string;
  stream: Readable;
}

export interface FormConsumer {
  /** A text field, in order; throw (an AppError) to refuse the form. */
  field(name: string, value: string): void;
  /**
   * A file part, in order: resolve once its stream is consumed, reject to refuse the form. When the form
   * fails while the part is arriving, its stream is destroyed: the consumer removes what it wrote.
   */
  file(part: FilePart): Promise<void>;
}

export const malformedForm = () => invalidInput('Corpo multipart/form-data inválido');

export const isMultipartForm = (request: Request) => /^multipart\/form-data\s*(;|$)/i.test(request.headers.get('content-type') ?? '');

/**
 * Reads a multipart/form-data request into `consumer`. Resolves when the body has ended and every file
 * part was consumed; otherwise throws 400 INVALID_INPUT (malformed form, limits, NUL characters, a body
 * the client broke off), 413 PAYLOAD_TOO_LARGE (body limit), what the consumer threw, or the AppError
 * the body itself failed with (the server's 408 body deadline) — after every file part has settled.
 */
export async function readMultipartForm(request: Request, limits: FormLimits, consumer: FormConsumer): Promise<void> {
  const contentType = request.headers.get('content-type') ?? '';
  if (!isMultipartForm(request) || !request.body) throw invalidInput('Envie o formulário como multipart/form-data');
  if (Number(request.headers.get('content-length') ?? 0) > limits.maxBodyBytes) {
    // Cancelled through a reader: on Node's server that detaches the request from its socket without
    // closing it (stream.cancel() on @whatwg-node's request closes the socket and the 413 is lost).
    void request.body
      .getReader()
      .cancel()
      .catch(() => {});
    throw tooLarge();
  }

  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { 'content-type': contentType },
      // File names sent by browsers and fetch are raw UTF-8, not latin1.
      defParamCharset: 'utf8',
      limits: {
        fields: limits.maxFields,
        fieldSize: limits.maxFieldBytes,
        fieldNameSize: 200,
        files: limits.maxFiles,
        parts: limits.maxFields + limits.maxFiles,
        headerPairs: 20,
      },
    });
  } catch {
    throw malformedForm();
  }

  let failure: Error | undefined;
  let interrupt: (() => void) | undefined;
  const fail = (error: unknown) => {
    if (failure !== undefined) return;
    failure = error instanceof Error ? error : new Error(String(error));
    interrupt?.();
  };
  /**
   * `step`, or undefined as soon as the form fails. Not Promise.race against one long-pending failure
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

  const parts: Promise<void>[] = [];
  parser.on('field', (name, value, info) => {
    if (failure !== undefined) return;
    if (info.nameTruncated || info.valueTruncated) return fail(invalidField(name.slice(0, 100), `excede ${limits.maxFieldBytes} bytes`));
    if (name.includes('\0') || value.includes('\0')) return fail(invalidField(name.replace(/\0/g, ''), `contém caracteres inválidos`));
    try {
      consumer.field(name, value);
    } catch (error) {
      fail(error);
    }
  });
  parser.on('file', (field, stream, info) => {
    // A failing form destroys the part arriving with its error; the consumer may not be listening (it
    // refused the part, or has not piped it yet): the error is the form's, not an uncaught one.
    stream.on('error', () => {});
    const filename = info.filename ?? '';
    if (failure !== undefined) return void stream.resume();
    if (field.includes('\0') || filename.includes('\0')) {
      stream.resume();
      return fail(invalidInput('Nome de arquivo inválido'));
    }
    parts.push(
      consumer.file({ field, filename, mimeType: info.mimeType, stream }).catch((error) => {
        stream.resume();
        // The consumer's refusal, the disk failing (500) or the body's own error as they are; the part
        // itself breaking (the parser destroyed it) is the form's fault.
        fail(error instanceof AppError || (error as NodeJS.ErrnoException).syscall ? error : malformedForm());
      }),
    );
  });
  const tooMany = (what: string, max: number) => () => fail(invalidInput(`O formulário aceita no máximo ${max} ${what}`));
  parser.on('filesLimit', tooMany(limits.maxFiles === 1 ? 'arquivo' : 'arquivos', limits.maxFiles));
  parser.on('fieldsLimit', tooMany('campos', limits.maxFields));
  parser.on('partsLimit', tooMany('campos', limits.maxFields));
  parser.on('error', () => fail(malformedForm()));
  const parsed = new Promise<void>((resolve) => parser.once('close', resolve));

  // Pump the body into the parser one chunk at a time; the parser acknowledges a chunk only once the
  // file part has taken it, so a slow consumer slows the reading of the socket.
  const reader = request.body.getReader();
  let received = 0;
  let bodyDone = false;
  // A read fails when the client breaks off (400), or with the server's own refusal as an AppError
  // (the body deadline's 408), which stays what it is.
  const broken = (error: unknown) => fail(error instanceof AppError ? error : invalidInput('O envio do formulário foi interrompido'));
  while (failure === undefined) {
    const read = await untilFailure(reader.read().catch(broken));
    if (!read || failure !== undefined) break;
    if (read.done) {
      bodyDone = true;
      parser.end();
      break;
    }
    received += read.value.byteLength;
    if (received > limits.maxBodyBytes) fail(tooLarge());
    else await untilFailure(new Promise<void>((resolve) => parser.write(read.value, () => resolve())));
  }
  await untilFailure(parsed);
  // The parser is done when the last part ended; a file may still be on its way to its consumer.
  if (failure === undefined) await Promise.all(parts);
  if (failure === undefined) return;

  // Stop everything: a file part still arriving errors (its consumer removes what it wrote) and the rest
  // of the body is not read.
  parser.destroy(failure);
  if (!bodyDone) void reader.cancel().catch(() => {});
  await Promise.all(parts);
  throw failure;
}
