// The bucket store (STORAGE=s3): files live in an S3-compatible bucket under their bare key, so every
// server process on every machine sees the same files. Uploads stream through @aws-sdk/lib-storage's
// multipart upload: one part (5 MB, S3's minimum) is held in memory at a time, never the whole file, and
// a failed or refused upload is aborted, so no object appears. An object exists only once complete.
import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { S3Settings } from '../config.js';
import { AppError } from '../errors.js';
import { log } from '../log.js';
import {
  FileMeter,
  isStorageKey,
  newStorageKey,
  storageUnavailable,
  type ByteRange,
  type FileSource,
  type FileStorage,
  type OpenedFile,
  type StoredFile,
} from './storage.js';

/** S3's smallest part: what one upload holds in memory at most. */
export const PART_BYTES = 5 * 1024 * 1024;

export function createS3Client(settings: S3Settings): S3Client {
  return new S3Client({
    region: settings.region,
    endpoint: settings.endpoint,
    forcePathStyle: settings.forcePathStyle,
    credentials: settings.accessKeyId ? { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey! } : undefined,
    // An unreachable endpoint fails in seconds (→ 503), not after the operating system's connect timeout.
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 },
  });
}

export function createS3Storage(settings: S3Settings, client: S3Client = createS3Client(settings)): FileStorage {
  const Bucket = settings.bucket;

  async function put(source: FileSource, { maxBytes }: { maxBytes: number }): Promise<StoredFile> {
    const key = newStorageKey();
    const meter = new FileMeter(maxBytes);
    let sourceFailure: { error: unknown } | undefined;
    async function* metered() {
      try {
        // for-await cancels a web stream (or returns an iterator) when the loop ends early: the sender stops.
        for await (const chunk of source as AsyncIterable<Uint8Array>) {
          meter.take(chunk);
          yield chunk;
        }
      } catch (error) {
        sourceFailure = { error };
        throw error;
      }
    }
    const body = Readable.from(metered(), { objectMode: false });
    const upload = new Upload({
      client,
      params: { Bucket, Key: key, Body: body },
      partSize: PART_BYTES,
      queueSize: 1,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (error) {
      body.destroy();
      // The sender's failure (413, a broken form, a body deadline) is the answer; lib-storage aborted the upload.
      if (sourceFailure) throw sourceFailure.error;
      throw unavailable('put', key, error);
    }
    return meter.stored(key);
  }

  async function head(key: string) {
    try {
      return await client.send(new HeadObjectCommand({ Bucket, Key: key }));
    } catch (error) {
      if (isNotFound(error)) return null;
      throw unavailable('head', key, error);
    }
  }

  async function open(key: string): Promise<OpenedFile | null> {
    if (!isStorageKey(key)) return null;
    const found = await head(key);
    if (!found) return null;
    return openedObject(key, found.ContentLength ?? 0, found.LastModified ?? new Date(0), found.ETag);
  }

  function openedObject(key: string, size: number, mtime: Date, etag: string | undefined): OpenedFile {
    return {
      key,
      size,
      mtime,
      close: async () => {},
      stream(range = { start: 0, end: size - 1 }, signal) {
        return objectStream(key, range, size, etag, signal);
      },
    };
  }

  /** The bytes of one range, fetched at the first pull and passed on as the consumer pulls them. */
  function objectStream(
    key: string,
    range: ByteRange,
    size: number,
    etag: string | undefined,
    signal?: AbortSignal,
  ): ReadableStream<Uint8Array> {
    // The client already left (an aborted signal fires no event): nothing to fetch.
    if (signal?.aborted) return new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
    const request = new AbortController();
    const abort = () => request.abort();
    signal?.addEventListener('abort', abort, { once: true });
    const finish = () => signal?.removeEventListener('abort', abort);
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    return new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          try {
            if (!reader) {
              if (range.end < range.start) {
                finish();
                return controller.close();
              }
              const whole = range.start === 0 && range.end === size - 1;
              const response = await client.send(
                // IfMatch: the bytes are those HeadObject described, or the read fails.
                new GetObjectCommand({ Bucket, Key: key, Range: whole ? undefined : `bytes=${range.start}-${range.end}`, IfMatch: etag }),
                { abortSignal: request.signal },
              );
              reader = response.Body!.transformToWebStream().getReader() as ReadableStreamDefaultReader<Uint8Array>;
            }
            const { done, value } = await reader.read();
            if (done) {
              finish();
              controller.close();
            } else controller.enqueue(value);
          } catch (error) {
            finish();
            controller.error(error);
          }
        },
        cancel: async () => {
          finish();
          request.abort();
          await reader?.cancel().catch(() => {});
        },
      },
      { highWaterMark: 0 },
    );
  }

  async function remove(key: string): Promise<boolean> {
    if (!isStorageKey(key) || !(await head(key))) return false;
    try {
      await client.send(new DeleteObjectCommand({ Bucket, Key: key }));
      return true;
    } catch (error) {
      throw unavailable('delete', key, error);
    }
  }

  async function* list(): AsyncIterable<{ key: string; mtime: Date }> {
    let ContinuationToken: string | undefined;
    do {
      const page = await send('list', () => client.send(new ListObjectsV2Command({ Bucket, ContinuationToken })));
      // Only objects named like a key are stored files (a shared bucket may hold others).
      for (const object of page.Contents ?? [])
        if (isStorageKey(object.Key)) yield { key: object.Key, mtime: object.LastModified ?? new Date(0) };
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (ContinuationToken);
  }

  async function removeStalePartials(before: Date): Promise<number> {
    let removed = 0;
    let KeyMarker: string | undefined;
    let UploadIdMarker: string | undefined;
    do {
      let page;
      try {
        page = await client.send(new ListMultipartUploadsCommand({ Bucket, KeyMarker, UploadIdMarker }));
      } catch (error) {
        // Some S3-compatible servers (s3rver) do not list multipart uploads; a bucket lifecycle rule
        // (AbortIncompleteMultipartUpload) does the same job there.
        if ((error as { name?: string }).name === 'NotImplemented') return removed;
        throw unavailable('list uploads', undefined, error);
      }
      for (const { Key, UploadId, Initiated } of page.Uploads ?? []) {
        if (!isStorageKey(Key) || !UploadId || !Initiated || Initiated >= before) continue;
        await send('abort upload', () => client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId })));
        removed++;
      }
      [KeyMarker, UploadIdMarker] = page.IsTruncated ? [page.NextKeyMarker, page.NextUploadIdMarker] : [undefined, undefined];
    } while (KeyMarker);
    return removed;
  }

  return { put, open, delete: remove, list, removeStalePartials };
}

async function send<T>(operation: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw unavailable(operation, undefined, error);
  }
}

function isNotFound(error: unknown): boolean {
  return (
    error instanceof S3ServiceException &&
    (error.$metadata.httpStatusCode === 404 || error.name === 'NotFound' || error.name === 'NoSuchKey')
  );
}

/** Any failure of the bucket (unreachable, refused credentials, missing bucket) is a 503 to the client; the cause is logged. */
function unavailable(operation: string, key: string | undefined, error: unknown): AppError {
  if (error instanceof AppError) return error;
  log.error('object storage failed', { operation, key, error: String((error as Error)?.message ?? error), name: (error as Error)?.name });
  return storageUnavailable();
}
