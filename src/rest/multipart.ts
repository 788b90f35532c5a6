// multipart/form-data reaches the same operations as JSON: text fields become the JSON body (a field
// holding JSON — an array, an object — is parsed; a repeated field becomes an array) and files go to
// the context, by field name, for the resolver that takes them.
import { AppError } from '../errors.js';
import { MAX_FILE_BYTES, tooLarge } from './body.js';

export async function parseMultipart(bytes: Uint8Array, contentType: string): Promise<{ body: Record<string, unknown>; files: Map<string, File> }> {
  let form: FormData;
  try {
    form = await new Response(Buffer.from(bytes), { headers: { 'content-type': contentType } }).formData();
  } catch {
    throw new AppError('INVALID_INPUT', 'Corpo multipart/form-data inválido');
  }
  const body: Record<string, unknown> = {};
  const files = new Map<string, File>();
  for (const [name, value] of form.entries()) {
    if (typeof value !== 'string') {
      if (value.size > MAX_FILE_BYTES) throw tooLarge();
      files.set(name, value);
      continue;
    }
    const parsed = /^\s*[[{]/.test(value) ? tryJson(value) : value;
    if (name in body) body[name] = ([] as unknown[]).concat(body[name], parsed);
    else body[name] = parsed;
  }
  return { body, files };
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
