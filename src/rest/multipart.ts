// multipart/form-data bodies of field routes: text fields by name (a repeated field keeps every value)
// and files by name, which become the field's typed `File` arguments. Files are spooled to temporary
// files as they arrive (storage/file-spool.ts), never held in memory; the caller disposes of the spool
// when the request is done. The body limit (413) bounds what a form holds; whether a file is too large
// is the field's own rule (a knowledge file over 10 MB inside an accepted body is a 400).
import { invalidField } from '../errors.js';
import { MAX_BODY_BYTES } from '../config.js';
import type { FileSpool } from '../storage/file-spool.js';
import { readMultipartForm, type FormLimits } from '../storage/multipart-form.js';

/** A text field may be as long as a JSON body allows (a knowledge item's content is up to 2,000,000 characters). */
export const REST_FORM_LIMITS: FormLimits = { maxFields: 1000, maxFieldBytes: MAX_BODY_BYTES, maxFiles: 20, maxBodyBytes: MAX_BODY_BYTES };

export async function readRestForm(
  request: Request,
  spool: FileSpool,
): Promise<{ fields: Map<string, string[]>; files: Map<string, File> }> {
  const fields = new Map<string, string[]>();
  const files = new Map<string, File>();
  const fileFields = new Set<string>();
  await readMultipartForm(request, REST_FORM_LIMITS, {
    field(name, value) {
      const values = fields.get(name);
      if (values) values.push(value);
      else fields.set(name, [value]);
    },
    async file(part) {
      if (fileFields.has(part.field)) throw invalidField(part.field, 'aceita um único arquivo');
      fileFields.add(part.field);
      files.set(part.field, await spool.take(part));
    },
  });
  return { fields, files };
}
