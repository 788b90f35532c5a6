// Reads a request body under a hard byte limit, refusing an oversized one before it is buffered:
// by Content-Length when declared, otherwise as soon as the stream passes the limit.
import { AppError } from '../errors.js';

export const MAX_FILE_BYTES = 10 * 1024 * 1024;
/** 10 MB of file plus room for the rest of a multipart form. */
export const MAX_BODY_BYTES = MAX_FILE_BYTES + 256 * 1024;

export const tooLarge = () => new AppError('PAYLOAD_TOO_LARGE', 'Arquivo ou corpo da requisição excede 10 MB');

export async function readLimitedBody(request: Request, limit = MAX_BODY_BYTES): Promise<Uint8Array> {
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (declared > limit) throw tooLarge();
  if (!request.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
