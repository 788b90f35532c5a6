// Text extraction for knowledge files: the one entry point. Cheap checks run here (extension, size,
// whether the bytes are what the extension claims); the parsing runs in a separate process
// (run-child.ts), so a hostile file costs at most that process. Every refusal is a 400 INVALID_INPUT.
import { clientGone, invalidInput } from '../../../errors.js';
import { log } from '../../../log.js';
import { MAX_FILE_BYTES } from '../../../config.js';
import { ACCEPTED_EXTENSIONS, contentMatches, fileTypeOf, isBinaryKind } from './file-types.js';
import { MAX_INFLATED_BYTES, MAX_TEXT_CHARS, type RefusalReason } from './child/limits.mjs';
import { normalizeText } from './child/normalize.mjs';
import { DEFAULT_EXTRACTION_LIMITS, runExtraction, type ExtractionLimits } from './run-child.js';
import { ExtractionSlots } from './slots.js';

export { ACCEPTED_EXTENSIONS } from './file-types.js';
export { MAX_TEXT_CHARS } from './child/limits.mjs';
export type { ExtractionLimits } from './run-child.js';

/** Who extracts, and whose turn it is: one scheduler per server (its settings: EXTRACT_CONCURRENCY, EXTRACT_WAIT_MS). */
export interface ExtractionTurn {
  slots: ExtractionSlots;
  /** The organisation the file belongs to: one extraction at a time each. */
  org: string;
  /** The request's: once aborted, the file leaves the queue or its process is killed. */
  signal?: AbortSignal;
  /** The organisation's other files waiting before this stage (its uploads not yet admitted). */
  queued?: () => number;
}

/**
 * Plain text (.txt, .csv, .rst, .adoc) up to this size is decoded here, without a process or a turn: no
 * library parses it (the bytes were checked as UTF-8 above), and normalising 64 KB takes about 0.6 ms
 * (1 MB: 30 ms, so larger files still go to a process). Starting the process was most of what a small
 * file cost: 30–110 ms of Node's start-up for a 34-byte CSV, and a turn behind other organisations' files.
 */
export const IN_SERVER_TEXT_BYTES = 64 * 1024;

const schedulers = new WeakMap<object, ExtractionSlots>();

/**
 * The OS priority (nice) of an extraction whose organisation has more files waiting. The queue alone
 * does not keep one organisation from slowing another: on two cores the flooder's extraction process
 * takes a core from the other's request and its own extraction. Measured (bench fairness line, 2 shared
 * cores at load 5–7): B's p99 ratio 2.5–4.7 with every extraction at the server's priority, 5.8 with
 * every one at 19 (B's own extraction then loses to everything), 1.2–2.9 (median 1.65 over 7 runs)
 * with only the flooder's at 19.
 */
export const BACKGROUND_NICENESS = 19;

/** The scheduler of the server with these settings. */
export function extractionSlots(config: { extractConcurrency: number; extractWaitMs: number }): ExtractionSlots {
  let slots = schedulers.get(config);
  if (!slots) schedulers.set(config, (slots = new ExtractionSlots(config.extractConcurrency, config.extractWaitMs)));
  return slots;
}

const admissions = new WeakMap<object, ExtractionSlots>();

/**
 * Knowledge uploads admitted per organisation (the REST routes' `admission`): one organisation's files
 * are read, extracted and written one request at a time, the others waiting before their body is read
 * (after EXTRACT_WAIT_MS, 503), so a flooder's waiting files are not held in memory (10 MB each).
 * Per organisation only: a slow client holds no one else's turn.
 */
export function uploadAdmission(config: { extractWaitMs: number }): ExtractionSlots {
  let admission = admissions.get(config);
  if (!admission) admissions.set(config, (admission = new ExtractionSlots(Number.POSITIVE_INFINITY, config.extractWaitMs, () => {})));
  return admission;
}

export interface ExtractedText {
  text: string;
  mimeType: string;
}

const MESSAGES: Record<RefusalReason, (extension: string) => string> = {
  mismatch: (ext) => `O conteúdo do arquivo não corresponde à extensão ${ext}`,
  unreadable: (ext) => `Não foi possível extrair o texto do arquivo ${ext}: conteúdo inválido ou corrompido`,
  inflated_too_large: () => `A planilha descompactada excede ${MAX_INFLATED_BYTES / 1024 / 1024} MB`,
  too_long: () => `O texto extraído do arquivo excede ${MAX_TEXT_CHARS.toLocaleString('pt-BR')} caracteres`,
  limits: () => 'A extração do texto do arquivo excedeu o limite de memória ou de tempo',
};

/**
 * The text of a knowledge file and its MIME type, or an INVALID_INPUT AppError saying why not; a
 * SERVICE_UNAVAILABLE one when it waited too long for its turn. Without `turn` it extracts at once (tests
 * of the extraction itself). `limits` exists for tests (e.g. a shorter time limit); callers use the defaults.
 * `handOver`: the caller no longer needs `bytes`, which may be moved to the extraction rather than copied.
 */
export async function extractText(
  file: { filename: string; bytes: Uint8Array; handOver?: boolean },
  limits: ExtractionLimits = DEFAULT_EXTRACTION_LIMITS,
  turn?: ExtractionTurn,
): Promise<ExtractedText> {
  const type = fileTypeOf(file.filename);
  if (!type) throw invalidInput(`Extensão de arquivo não aceita. Use uma destas: ${ACCEPTED_EXTENSIONS.join(', ')}`);
  const { extension } = type;
  if (file.bytes.byteLength > MAX_FILE_BYTES) throw invalidInput('O arquivo excede o limite de 10 MB');
  if (!contentMatches(type.kind, file.bytes)) {
    throw invalidInput(
      isBinaryKind(type.kind) ? MESSAGES.mismatch(extension) : `O arquivo ${extension} deve ser texto UTF-8, sem bytes nulos`,
    );
  }
  if (type.kind === 'text' && file.bytes.byteLength <= IN_SERVER_TEXT_BYTES) {
    const text = normalizeText(Buffer.from(file.bytes.buffer, file.bytes.byteOffset, file.bytes.byteLength).toString('utf8'));
    return { text, mimeType: type.mimeType };
  }
  let outcome;
  try {
    const release = await turn?.slots.acquire(turn.org, turn.signal);
    // An organisation with more files waiting is flooding: its extraction yields the CPU to everyone else.
    const niceness = turn && turn.slots.waitingOf(turn.org) + (turn.queued?.() ?? 0) > 0 ? BACKGROUND_NICENESS : 0;
    outcome = await runExtraction({ kind: type.kind, bytes: file.bytes }, limits, {
      signal: turn?.signal,
      niceness,
      handOver: file.handOver,
      owner: turn?.org,
    }).finally(() => release?.());
  } catch (e) {
    // The client went away: no one reads the answer, and it is no server fault to log.
    if (turn?.signal?.aborted) throw clientGone();
    throw e;
  }
  if (!outcome.ok) {
    log.warn('knowledge file extraction refused', { extension, reason: outcome.reason, detail: outcome.detail });
    const error = invalidInput(MESSAGES[outcome.reason](extension));
    error.cause = { reason: outcome.reason, detail: outcome.detail }; // for logs and tests, never sent to clients
    throw error;
  }
  return { text: outcome.text, mimeType: type.mimeType };
}
