// A knowledge item's file: its text (extracted in a separate process, ./extract) and the metadata the
// item reports. The original bytes are not kept: the item stores the text and file_name, file_type, file_size.
import { clientGone, invalidInput } from '../../errors.js';
import type { Context } from '../../context/context.js';
import { DEFAULT_EXTRACTION_LIMITS } from './extract/run-child.js';
import { extractionSlots, extractText, uploadAdmission } from './extract/index.js';
import { knowledgePace } from './extract/pace.js';

export interface KnowledgeFile {
  file_name: string;
  /** MIME type, from the (accepted) extension once the content matched it. */
  file_type: string;
  file_size: number;
  text: string;
}

const NAME_MAX = 255;

/**
 * Extracts in the organisation's turn (one at a time each, EXTRACT_CONCURRENCY in all), at its pace while
 * others are active (extract/pace.ts); stops if the client goes.
 */
export async function readKnowledgeFile(ctx: Context, tenantId: string, file: File): Promise<KnowledgeFile> {
  // Some clients send a path ("C:\fakepath\preços.pdf"); the item keeps the base name only.
  const name = file.name.split(/[\\/]/).pop()!.trim();
  if (!name) throw invalidInput('O arquivo deve ter um nome com extensão');
  if (name.length > NAME_MAX) throw invalidInput(`O nome do arquivo aceita no máximo ${NAME_MAX} caracteres`);
  try {
    await knowledgePace(ctx.config).take(tenantId, file.size, ctx.signal);
  } catch (e) {
    throw ctx.signal?.aborted ? clientGone() : e;
  }
  const bytes = new Uint8Array(await file.arrayBuffer());
  const turn = {
    slots: extractionSlots(ctx.config),
    org: tenantId,
    signal: ctx.signal,
    queued: () => uploadAdmission(ctx.config).waitingOf(tenantId),
  };
  const file_size = bytes.byteLength;
  // The bytes are not needed here afterwards: a large file moves to the extraction instead of being copied.
  const { text, mimeType } = await extractText({ filename: name, bytes, handOver: true }, DEFAULT_EXTRACTION_LIMITS, turn);
  return { file_name: name, file_type: mimeType, file_size, text };
}

/** The knowledge write routes' admission: one organisation's file uploads one at a time, before their body is read. */
export async function admitKnowledgeUpload({
  tenantId,
  config,
  signal,
}: {
  tenantId: string;
  config: { extractWaitMs: number };
  signal: AbortSignal;
}): Promise<() => void> {
  try {
    return await uploadAdmission(config).acquire(tenantId, signal);
  } catch (e) {
    // The client went away while waiting: no one reads the answer, and it is no server fault to log.
    throw signal.aborted ? clientGone() : e;
  }
}
