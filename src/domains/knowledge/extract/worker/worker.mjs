// The extraction worker thread: extracts the text of one file, normalises it and posts one outcome.
// Everything under worker/ is plain JavaScript (type-checked through JSDoc) so the thread starts with no
// TypeScript loader: through tsx's loader, pdf.js alone took 1.4 s more and 180 MB more to load, in
// every worker. Each kind imports only its own library.
import { parentPort, workerData } from 'node:worker_threads';
import { MAX_TEXT_CHARS, Refusal } from './limits.mjs';
import { normalizeText } from './normalize.mjs';

/** @typedef {import('../file-types.js').FileKind} FileKind */
/** @typedef {{ kind: FileKind, bytes: Uint8Array }} WorkerInput */
/** @typedef {{ ok: true, text: string } | { ok: false, reason: import('./limits.mjs').RefusalReason, detail?: string }} WorkerOutcome */
/** @typedef {(bytes: Uint8Array) => string | Promise<string>} Extractor */

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
 * @param {WorkerInput} input
 * @returns {Promise<WorkerOutcome>}
 */
async function extract({ kind, bytes }) {
  try {
    const extractor = await extractors[kind]();
    const text = normalizeText(await extractor(bytes));
    return text.length > MAX_TEXT_CHARS ? { ok: false, reason: 'too_long' } : { ok: true, text };
  } catch (error) {
    if (error instanceof Refusal) return { ok: false, reason: error.reason, detail: error.message };
    return { ok: false, reason: 'unreadable', detail: String(error) };
  }
}

parentPort?.postMessage(await extract(workerData));
