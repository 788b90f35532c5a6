// The extraction process: started by the launcher thread (launcher.mjs) with an empty environment and a
// heap limit, killed by it when it runs over its time or memory limit, and by the kernel once the server
// is gone (or by its own watchdog thread, watchdog.mjs, where the launcher cannot do that). It receives a
// file over IPC, extracts and normalises its text and sends one outcome back; the launcher then ends it,
// or keeps it for the next file of the same organisation (only after a Markdown, MDX, HTML or text file read
// without fault).
// Everything under child/ is plain JavaScript (type-checked through JSDoc), so the process starts with no
// TypeScript loader: through tsx's loader, pdf.js alone took 1.4 s more and 180 MB more to load. Each
// kind imports only its own library.
import { Worker } from 'node:worker_threads';
import { MAX_TEXT_CHARS, Refusal } from './limits.mjs';
import { normalizeText } from './normalize.mjs';

/** @typedef {import('../file-types.js').FileKind} FileKind */
/** @typedef {{ kind: FileKind, bytes: Uint8Array }} ExtractionInput */
/** @typedef {{ ok: true, text: string } | { ok: false, reason: import('./limits.mjs').RefusalReason, detail?: string }} ExtractionOutcome */
/** @typedef {(bytes: Uint8Array) => string | Promise<string>} Extractor */

// Where the launcher cannot watch the process itself (no /proc or no setpriv), it asks for a watchdog here.
if (process.argv[2] === '--own-watchdog') {
  const [maxRssMb, serverPid] = process.argv.slice(3).map(Number);
  new Worker(new URL('./watchdog.mjs', import.meta.url), { workerData: { maxRssMb, serverPid } }).unref();
}

/** @param {Uint8Array} bytes */
const decode = (bytes) => new TextDecoder('utf-8', { fatal: true }).decode(bytes);

/** @type {Record<FileKind, () => Promise<Extractor>>} */
const extractors = {
  text: async () => decode,
  markdown: async () => {
    const { markdownText } = await import('./markdown.mjs');
    return (bytes) => markdownText(decode(bytes), { mdx: false });
  },
  mdx: async () => {
    const { markdownText } = await import('./markdown.mjs');
    return (bytes) => markdownText(decode(bytes), { mdx: true });
  },
  html: async () => {
    const { htmlText } = await import('./html.mjs');
    return (bytes) => htmlText(decode(bytes));
  },
  pdf: async () => (await import('./pdf.mjs')).pdfText,
  xlsx: async () => (await import('./xlsx.mjs')).xlsxText,
  xls: async () => (await import('./xls.mjs')).xlsText,
};

/**
 * @param {ExtractionInput} input
 * @returns {Promise<ExtractionOutcome>}
 */
async function extract({ kind, bytes }) {
  try {
    const extractor = await extractors[kind]();
    // IPC delivers the bytes as a Buffer; pdf.js wants a plain Uint8Array.
    const text = normalizeText(await extractor(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)));
    return text.length > MAX_TEXT_CHARS ? { ok: false, reason: 'too_long' } : { ok: true, text };
  } catch (error) {
    return failure(error);
  }
}

/**
 * @param {unknown} error
 * @returns {ExtractionOutcome}
 */
function failure(error) {
  if (error instanceof Refusal) return { ok: false, reason: error.reason, detail: error.message };
  return { ok: false, reason: 'unreadable', detail: String(error) };
}

/** Whether a file is being read now (the launcher sends the next one only after this one's outcome). */
let reading = false;

/** @param {ExtractionOutcome} outcome */
const reply = (outcome) => {
  reading = false;
  process.send?.(outcome);
};

// A library that fails outside the promise it returned (an 'error' event nobody listens to) still
// makes the file unreadable, not a crash; the launcher then ends the process. Such a failure between
// files (a late one of the file before) ends the process before it could be blamed on the next.
/** @param {unknown} error */
const failedOutside = (error) => {
  if (!reading) process.exit(1);
  reply(failure(error));
};
process.on('uncaughtException', failedOutside);
process.on('unhandledRejection', failedOutside);
process.on('disconnect', () => process.exit(0));
// One file at a time; the launcher may keep the process for the same organisation's next file (launcher.mjs).
process.on('message', (/** @type {ExtractionInput} */ input) => {
  reading = true;
  void extract(input).then(reply);
});
// Markdown's parsers (the most common knowledge files), loaded while this process waits as a spare
// rather than once its file is here: B's small Markdown upload went from a median of 58–74 ms to 44–53
// alone on the bench machine. Other kinds still load their library on arrival.
import('./markdown.mjs').catch(() => {});
