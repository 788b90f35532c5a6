// Which files may become knowledge, what their MIME type is, and whether their bytes are what the
// extension claims: a header for the binary formats, a native UTF-8 scan for text. No parsing here.
import { isUtf8 } from 'node:buffer';
import { extname } from 'node:path';

export type FileKind = 'text' | 'markdown' | 'mdx' | 'html' | 'pdf' | 'xlsx' | 'xls';

export interface FileType {
  kind: FileKind;
  mimeType: string;
}

const TYPES: Record<string, FileType> = {
  '.txt': { kind: 'text', mimeType: 'text/plain' },
  '.md': { kind: 'markdown', mimeType: 'text/markdown' },
  '.mdx': { kind: 'mdx', mimeType: 'text/mdx' },
  '.rst': { kind: 'text', mimeType: 'text/x-rst' },
  '.adoc': { kind: 'text', mimeType: 'text/asciidoc' },
  '.html': { kind: 'html', mimeType: 'text/html' },
  '.pdf': { kind: 'pdf', mimeType: 'application/pdf' },
  '.xlsx': { kind: 'xlsx', mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' },
  '.xls': { kind: 'xls', mimeType: 'application/vnd.ms-excel' },
  '.csv': { kind: 'text', mimeType: 'text/csv' },
};

export const ACCEPTED_EXTENSIONS = Object.keys(TYPES);

/** The file's lower-cased extension ('.pdf') and its type, when the extension is accepted. */
export function fileTypeOf(filename: string): (FileType & { extension: string }) | undefined {
  const extension = extname(filename).toLowerCase();
  return Object.hasOwn(TYPES, extension) ? { ...TYPES[extension], extension } : undefined;
}

const PDF_HEADER = Buffer.from('%PDF-');
const ZIP_LOCAL_HEADER = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const OLE2_HEADER = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

export const isBinaryKind = (kind: FileKind) => kind === 'pdf' || kind === 'xlsx' || kind === 'xls';

/**
 * Whether the bytes look like the kind: a PDF header (readers accept it within the first KB), a zip
 * for XLSX (the workbook inside is checked in the worker), an OLE2 compound file for XLS, and UTF-8
 * without NUL bytes for every text type.
 */
export function contentMatches(kind: FileKind, bytes: Uint8Array): boolean {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (kind) {
    case 'pdf':
      return buf.subarray(0, 1024).includes(PDF_HEADER);
    case 'xlsx':
      return buf.subarray(0, 4).equals(ZIP_LOCAL_HEADER);
    case 'xls':
      return buf.subarray(0, 8).equals(OLE2_HEADER);
    default:
      return !buf.includes(0) && isUtf8(buf);
  }
}
