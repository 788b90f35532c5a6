// Reads a request body under a hard byte limit, refusing an oversized one before it is buffered:
// by Content-Length when declared, otherwise as soon as the stream passes the limit.
import { MAX_BODY_BYTES } from '../config.js';
import { tooLarge } from '../errors.js';

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
