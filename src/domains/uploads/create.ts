// Turning a stored file into an upload record. The file is in storage before its record is written (it
// is streamed there as it arrives); from then on any failure — a bad `type` or `folder`, a content that
// does not fit the type, the database refusing the insert — removes the file again, so a file never
// outlives a failed upload. The content type is judged from the bytes, never from the name.
import type { Context } from '../../context/context.js';
import { Prisma, type Upload, type UploadFileType } from '../../generated/prisma/client.js';
import { invalidInput, invalidField } from '../../errors.js';
import { log } from '../../log.js';
import { isActiveContentType } from '../../storage/serve.js';
import { sniffContentType, UNKNOWN_TYPE } from '../../storage/sniff.js';
import type { StoredFile } from '../../storage/storage.js';

/** A file already in storage, with what the client said about it. */
export interface IncomingFile extends StoredFile {
  /** The client's file name. */
  filename: string;
  /** The client's Content-Type for the file; used only when the bytes say nothing. */
  declaredType: string;
}

export interface UploadInput {
  /** `media` (default) or `audio`; text from a form is checked here, the GraphQL enum already is. */
  type?: string | null;
  folder?: string | null;
}

const FILE_TYPES: readonly UploadFileType[] = ['media', 'audio'];
/** An `Upload` row as Prisma would give it, from raw SQL on either driver. */
const UPLOAD_COLUMNS = Prisma.raw(
  'id::text AS id, tenant_id::text AS tenant_id, storage_key, filename, file_type::text AS file_type, mime_type, size, status::text AS status, folder, created_at, updated_at',
);
const FILENAME_MAX = 255;
const FOLDER_MAX = 100;
/** Segments of letters, digits, `_`, `-` and `.` (not starting with a dot), joined by `/`: a label, never a path. */
const FOLDER = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*(?:\/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*$/;
/** A MIME type's essence, as a client may declare it. */
const MIME = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/;
/** Containers that carry audio but are named as video by content sniffing (browser recordings are WebM). */
const AUDIO_CONTAINERS = new Set(['video/webm', 'video/ogg', 'video/mp4', 'application/ogg']);

/** The upload's record (every column: GraphQL's selections are all scalars), once its file is in storage. */
export async function recordUpload(ctx: Context, file: IncomingFile, input: UploadInput): Promise<Upload> {
  try {
    const fileType = uploadFileType(input.type);
    const folder = uploadFolder(input.folder);
    const filename = storedFilename(file.filename);
    const mimeType = await contentTypeOf(file);
    if (fileType === 'audio' && !mimeType.startsWith('audio/') && !AUDIO_CONTAINERS.has(mimeType)) {
      throw invalidInput(`O arquivo enviado como audio não é um áudio (${mimeType})`);
    }
    // One INSERT on the driver's fastest path (`pg` on PostgreSQL): Prisma's query compiler took about
    // 1 ms of main-thread CPU per upload, a sixth of a 1 MB upload's (src/storage/README.md, "Speed").
    const [upload] = await ctx.db.$tenantQueryDirect<Upload>(
      (tenant) => Prisma.sql`
        INSERT INTO uploads (tenant_id, storage_key, filename, file_type, mime_type, size, folder)
        VALUES (${tenant}, ${file.key}, ${filename}, ${fileType}::"UploadFileType", ${mimeType}, ${file.size}::int, ${folder})
        RETURNING ${UPLOAD_COLUMNS}`,
    );
    return upload;
  } catch (error) {
    await ctx.storage
      .delete(file.key)
      .catch((e) => log.error('could not remove the file of a failed upload', { key: file.key, error: String(e) }));
    throw error;
  }
}

function uploadFileType(value: string | null | undefined): UploadFileType {
  if (value === undefined || value === null) return 'media';
  if (!(FILE_TYPES as readonly string[]).includes(value)) throw invalidField('type', 'deve ser media ou audio');
  return value as UploadFileType;
}

function uploadFolder(value: string | null | undefined): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (value.length > FOLDER_MAX || !FOLDER.test(value)) {
    throw invalidField('folder', `aceita até ${FOLDER_MAX} caracteres: letras, números, _, - e ., em partes separadas por /`);
  }
  return value;
}

/** The name without any directory part and without its extension (a leading dot is not an extension). */
function storedFilename(name: string): string {
  const base = name.slice(Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\')) + 1);
  const dot = base.lastIndexOf('.');
  const stem = dot > 0 ? base.slice(0, dot) : base;
  if (!stem.trim()) throw invalidInput('Nome de arquivo inválido');
  if (/[\u0000-\u001f\u007f]/.test(stem)) throw invalidInput('O nome do arquivo contém caracteres de controle');
  if (stem.length > FILENAME_MAX) throw invalidInput(`O nome do arquivo aceita no máximo ${FILENAME_MAX} caracteres`);
  return stem;
}

/**
 * The bytes decide. Only when they say nothing (octet-stream: no known format, and not text) does the
 * client's declaration count, and never a type a browser would run, nor a text type (the bytes are not
 * text; a part without a Content-Type is declared text/plain by default): those stay opaque bytes.
 * Messaging's media files are judged by this same rule.
 */
export async function contentTypeOf(file: Pick<IncomingFile, 'head' | 'declaredType'>): Promise<string> {
  const sniffed = await sniffContentType(file.head);
  if (sniffed !== UNKNOWN_TYPE) return sniffed;
  const declared = file.declaredType.split(';')[0].trim().toLowerCase();
  const usable = MIME.test(declared) && declared.length <= 255 && !declared.startsWith('text/') && !isActiveContentType(declared);
  return usable ? declared : UNKNOWN_TYPE;
}
