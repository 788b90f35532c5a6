// multipart/form-data bodies of field routes: text fields by name (a repeated field keeps every value)
// and files by name, which become the field's typed `File` arguments. Large files that must be streamed
// to storage go through a handler route instead. The body limit bounds what a form holds; whether a file
// is too large is the field's own rule (a knowledge file over 10 MB inside an accepted body is a 400).
import { AppError } from '../errors.js';

export async function parseMultipart(bytes: Uint8Array, contentType: string): Promise<{ fields: Map<string, string[]>; files: Map<string, File> }> {
  let form: FormData;
  try {
    form = await new Response(Buffer.from(bytes), { headers: { 'content-type': contentType } }).formData();
  } catch {
    throw new AppError('INVALID_INPUT', 'Corpo multipart/form-data inválido');
  }
  const fields = new Map<string, string[]>();
  const files = new Map<string, File>();
  for (const [name, value] of form.entries()) {
    if (typeof value !== 'string') {
      if (files.has(name)) throw new AppError('INVALID_INPUT', `O campo ${name} aceita um único arquivo`);
      files.set(name, value);
      continue;
    }
    fields.set(name, [...(fields.get(name) ?? []), value]);
  }
  return { fields, files };
}
