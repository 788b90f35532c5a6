// A knowledge item's file: its text (extracted in a disposable process, ./extract) and the metadata the
// item reports. The original bytes are not kept: the item stores the text and file_name, file_type, file_size.
import { invalidInput } from '../../errors.js';
import { extractText } from './extract/index.js';

export interface KnowledgeFile {
  file_name: string;
  /** MIME type, from the (accepted) extension once the content matched it. */
  file_type: string;
  file_size: number;
  text: string;
}

const NAME_MAX = 255;

export async function readKnowledgeFile(file: File): Promise<KnowledgeFile> {
  // Some clients send a path ("C:\fakepath\preços.pdf"); the item keeps the base name only.
  const name = file.name.split(/[\\/]/).pop()!.trim();
  if (!name) throw invalidInput('O arquivo deve ter um nome com extensão');
  if (name.length > NAME_MAX) throw invalidInput(`O nome do arquivo aceita no máximo ${NAME_MAX} caracteres`);
  const bytes = new Uint8Array(await file.arrayBuffer());
  const { text, mimeType } = await extractText({ filename: name, bytes });
  return { file_name: name, file_type: mimeType, file_size: bytes.byteLength, text };
}
