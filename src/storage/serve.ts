// The media proxy's answer for one opened file: public caching, CORS for everyone, conditional requests
// (ETag / If-None-Match, Last-Modified / If-Modified-Since), one byte range, HEAD, and a body streamed from
// disk. Types a browser would run are never served as themselves: they download as opaque bytes.
import { createHash } from 'node:crypto';
// @whatwg-node's Response: the Node server writes a held body to the socket as it is (http/responses.ts).
import { Response } from '@whatwg-node/server';
import type { ByteRange, OpenedFile } from './storage.js';

const OPAQUE = 'application/octet-stream';
/** Bodies up to this size are read whole and written in one go; larger ones stream. */
const HELD_BODY_MAX = 256 * 1024;

/** Types a browser renders as a document or runs as script; `+xml` and `/xml` types are caught by suffix. */
const ACTIVE_TYPES = new Set([
  'text/html',
  'application/xhtml+xml',
  'image/svg+xml',
  'application/xml',
  'text/xml',
  'text/xsl',
  'application/xslt+xml',
  'application/javascript',
  'application/x-javascript',
  'application/ecmascript',
  'text/javascript',
  'text/x-javascript',
  'text/ecmascript',
  'text/jscript',
  'application/x-shockwave-flash',
  'multipart/x-mixed-replace',
]);

/** A MIME type with optional parameters; anything else (or nothing) is served as opaque bytes. */
const CONTENT_TYPE = /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(?:\s*;\s*[\w!#$&^.+-]+=(?:[\w!#$&^.+-]+|"[^"\\\u0000-\u001f]*"))*$/;

export function isActiveContentType(contentType: string): boolean {
  const essence = contentType.split(';')[0].trim().toLowerCase();
  return ACTIVE_TYPES.has(essence) || essence.endsWith('+xml') || essence.endsWith('/xml') || /(?:java|ecma)script/.test(essence);
}

export async function serveFile(request: Request, file: OpenedFile, { contentType }: { contentType: string }): Promise<Response> {
  const etag = strongEtag(file);
  const headers = new Headers({
    'cache-control': 'public, max-age=86400',
    'access-control-allow-origin': '*',
    'x-content-type-options': 'nosniff',
    etag,
    'last-modified': file.mtime.toUTCString(),
    'accept-ranges': 'bytes',
  });
  if (notModified(request, etag, file.mtime)) {
    void file.close();
    return new Response(null, { status: 304, headers });
  }
  if (!CONTENT_TYPE.test(contentType) || isActiveContentType(contentType)) {
    headers.set('content-type', OPAQUE);
    headers.set('content-disposition', 'attachment');
  } else {
    headers.set('content-type', contentType);
  }

  const range = request.method === 'GET' ? requestedRange(request, file.size, etag, file.mtime) : undefined;
  if (range === 'unsatisfiable') {
    void file.close();
    headers.set('content-range', `bytes */${file.size}`);
    headers.delete('content-type');
    headers.delete('content-disposition');
    return new Response(null, { status: 416, headers });
  }
  if (range) headers.set('content-range', `bytes ${range.start}-${range.end}/${file.size}`);
  headers.set('content-length', String(range ? range.end - range.start + 1 : file.size));
  const status = range ? 206 : 200;
  if (request.method === 'HEAD') {
    void file.close();
    return new Response(null, { status, headers });
  }
  const whole = range ?? { start: 0, end: file.size - 1 };
  if (file.read && whole.end + 1 - whole.start <= HELD_BODY_MAX) {
    return new Response((await file.read(whole)) as Uint8Array<ArrayBuffer>, { status, headers });
  }
  // The request's signal aborts when the client goes away: the file is closed even if nobody cancels the body.
  return new Response(file.stream(range, request.signal), { status, headers });
}

/** Stored files never change under a key, so key, size and mtime identify the bytes exactly. */
function strongEtag(file: OpenedFile): string {
  const digest = createHash('sha256').update(`${file.key}:${file.size}:${file.mtime.getTime()}`).digest('base64url');
  return `"${digest.slice(0, 27)}"`;
}

/** RFC 9110 §13.2.2: If-None-Match (weak comparison) wins over If-Modified-Since. */
function notModified(request: Request, etag: string, mtime: Date): boolean {
  const ifNoneMatch = request.headers.get('if-none-match');
  if (ifNoneMatch !== null) {
    return ifNoneMatch.split(',').some((tag) => {
      const t = tag.trim();
      return t === '*' || t.replace(/^W\//, '') === etag;
    });
  }
  const ifModifiedSince = Date.parse(request.headers.get('if-modified-since') ?? '');
  return !Number.isNaN(ifModifiedSince) && Math.floor(mtime.getTime() / 1000) * 1000 <= ifModifiedSince;
}

/**
 * The single byte range asked for: undefined to send the whole file (no Range, a malformed or multi-range
 * header, or an If-Range that no longer matches), 'unsatisfiable' for a range outside the file.
 */
function requestedRange(request: Request, size: number, etag: string, mtime: Date): ByteRange | 'unsatisfiable' | undefined {
  const header = request.headers.get('range');
  if (header === null) return undefined;
  const ifRange = request.headers.get('if-range');
  if (ifRange !== null && ifRange.trim() !== etag && Date.parse(ifRange) !== Math.floor(mtime.getTime() / 1000) * 1000) return undefined;
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  if (match[1] === '') {
    // A suffix: the last N bytes.
    const length = Number(match[2]);
    if (length === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - length), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? Infinity : Number(match[2]);
  if (end < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end: Math.min(end, size - 1) };
}
