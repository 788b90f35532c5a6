// Input hygiene for every transport: text with a NUL character or an unpaired UTF-16 surrogate cannot
// be stored (PostgreSQL refuses NUL; a lone surrogate is not Unicode) and is a client error, and values
// nested deeper than any argument needs are refused before they reach a resolver (decisions.md).
import { invalidField } from '../errors.js';

export const MAX_INPUT_DEPTH = 32;

// A NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one.
const DIRTY = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function isDirtyText(text: string): boolean {
  return DIRTY.test(text);
}

/** Throws INVALID_INPUT naming the first offending field of a JSON-like value. */
export function assertCleanInput(value: unknown, path = 'entrada', depth = 0): void {
  if (typeof value === 'string') {
    if (isDirtyText(value)) throw invalidField(path, 'contém caracteres inválidos (NUL ou surrogate isolado)');
    return;
  }
  if (value === null || typeof value !== 'object' || isFileOrBytes(value)) return;
  if (depth >= MAX_INPUT_DEPTH) throw invalidField(path, 'tem aninhamento profundo demais');
  if (Array.isArray(value)) {
    value.forEach((v, i) => assertCleanInput(v, `${path}[${i}]`, depth + 1));
    return;
  }
  for (const [k, v] of Object.entries(value)) {
    if (isDirtyText(k)) throw invalidField(path, 'contém uma chave inválida');
    assertCleanInput(v, path === 'entrada' ? k : `${path}.${k}`, depth + 1);
  }
}

/**
 * Sent files and raw bytes are not text: Files (what both transports hand over), any object with
 * arrayBuffer() (JSON variables never hold functions, so it is a file of some other class) and byte
 * arrays, whose millions of entries must not be walked.
 */
function isFileOrBytes(value: object): boolean {
  return (
    value instanceof Blob ||
    ArrayBuffer.isView(value) ||
    value instanceof ArrayBuffer ||
    typeof (value as { arrayBuffer?: unknown }).arrayBuffer === 'function'
  );
}
