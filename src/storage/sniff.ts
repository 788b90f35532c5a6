// The content type of a file judged by its first bytes (StoredFile.head), never by its name or the type
// the client declared. Binary formats come from file-type; text is recognised here, including the markup
// a browser would run (HTML by the WHATWG sniffing patterns, SVG, XML), so callers can refuse or disarm it.
import { fileTypeFromBuffer } from 'file-type';

export const UNKNOWN_TYPE = 'application/octet-stream';

/** file-type's names for types the API lists under their common names. */
const CANONICAL: Record<string, string> = {
  'audio/x-m4a': 'audio/mp4',
  'audio/x-flac': 'audio/flac',
};

/** WHATWG MIME Sniffing, "rules for identifying an unknown MIME type": tags that make a text HTML. */
const HTML_START = /^<(?:!doctype html|html|head|script|iframe|h1|div|font|table|a|style|title|b|body|br|p|!--)(?:[\s>]|$)/i;

export async function sniffContentType(head: Uint8Array): Promise<string> {
  const detected = await fileTypeFromBuffer(head).catch(() => undefined);
  if (detected && detected.mime !== 'application/xml') return CANONICAL[detected.mime] ?? detected.mime;
  const text = decodeText(head);
  if (text === null) return UNKNOWN_TYPE;
  const start = text.replace(/^\uFEFF?\s*/, '');
  if (HTML_START.test(start)) return 'text/html';
  if (/^<svg[\s>]/i.test(start) || (/^<\?xml[\s?]/i.test(start) && /<svg[\s>]/i.test(start))) return 'image/svg+xml';
  if (/^<\?xml[\s?]/i.test(start)) return 'application/xml';
  return 'text/plain';
}

/** The head as UTF-8 text, or null when it is empty, not UTF-8 or holds control characters. */
function decodeText(head: Uint8Array): string | null {
  if (head.byteLength === 0) return null;
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(withoutCutCharacter(head));
    return /[\u0000-\u0008\u000B\u000E-\u001F\u007F]/.test(text) ? null : text;
  } catch {
    return null;
  }
}

/** The head may end inside a multi-byte character: drop that incomplete character. */
function withoutCutCharacter(bytes: Uint8Array): Uint8Array {
  for (let back = 1; back <= Math.min(3, bytes.byteLength); back++) {
    const byte = bytes[bytes.byteLength - back];
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: look further back for the lead byte
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? bytes.subarray(0, bytes.byteLength - back) : bytes;
  }
  return bytes;
}
