// One extraction, one new Node process (child/main.mjs), discarded afterwards, within three limits:
// - a heap limit (--max-old-space-size): V8 ends the process when its heap is full;
// - a memory budget for the whole process, ArrayBuffers outside the heap included: the process's own
//   watchdog thread (child/watchdog.mjs), which also ends it if the server dies first;
// - a time limit: the server kills the process (SIGKILL), even one stuck in a loop that never yields.
// A process, not a worker thread: on Node 20 a worker that reaches its heap limit inside one large
// allocation aborts the whole server (nodejs/node#47224, reproduced in test/knowledge/extract.test.ts),
// and no cap on the libraries' inputs rules that out. A process also gets an empty environment (no
// database URL or secret for a parser to read) and its own address space.
// A small cap on how many run at once keeps a burst of uploads from adding up. Whatever the process
// does, the caller gets an outcome, never a crash.
import { fork } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { setExtractionQueue } from '../../../observability/metrics.js';
import type { ExtractionInput, ExtractionOutcome } from './child/main.mjs';

export interface ExtractionLimits {
  timeoutMs: number;
  /** Resident memory the extraction process may reach, heap and ArrayBuffers together. */
  maxRssMb: number;
  maxOldGenerationSizeMb: number;
}

export const DEFAULT_EXTRACTION_LIMITS: ExtractionLimits = {
  timeoutMs: 20_000,
  maxRssMb: 768,
  maxOldGenerationSizeMb: 256,
};

const CHILD_ENTRY = fileURLToPath(new URL('./child/main.mjs', import.meta.url));
const MAX_CONCURRENT = Math.max(1, Math.floor(os.availableParallelism() / 2));
/** V8 writes why it gave up (the "FATAL ERROR" line) within its first few KB of stderr. */
const STDERR_KEPT_CHARS = 16 * 1024;

let running = 0;
const waiting: (() => void)[] = [];

export async function runExtraction(input: ExtractionInput, limits: ExtractionLimits): Promise<ExtractionOutcome> {
  if (running < MAX_CONCURRENT) running++;
  else {
    const turn = new Promise<void>((resolve) => waiting.push(resolve)); // the finishing run hands its slot over
    setExtractionQueue(running, waiting.length);
    await turn;
  }
  setExtractionQueue(running, waiting.length);
  try {
    return await runOnce(input, limits);
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
    setExtractionQueue(running, waiting.length);
  }
}

/** Resolves once the process is gone (its memory released), with its outcome or why it died. */
function runOnce(input: ExtractionInput, limits: ExtractionLimits): Promise<ExtractionOutcome> {
  return new Promise((resolve, reject) => {
    const child = fork(CHILD_ENTRY, [String(limits.maxRssMb), String(process.pid)], {
      // Plain JavaScript: no TypeScript loader (or any other flag) inherited from `tsx` or NODE_OPTIONS.
      execArgv: [`--max-old-space-size=${limits.maxOldGenerationSizeMb}`, '--max-semi-space-size=16'],
      env: {},
      serialization: 'advanced', // the bytes travel as a typed array, not as JSON
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let outcome: ExtractionOutcome | undefined;
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < STDERR_KEPT_CHARS) stderr += chunk;
    });
    const settle = (result: ExtractionOutcome) => {
      outcome ??= result;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => settle({ ok: false, reason: 'limits', detail: `over ${limits.timeoutMs} ms` }), limits.timeoutMs);
    child.once('message', (result: ExtractionOutcome) => settle(result));
    child.on('error', (error) => {
      // A process that could not start is the server's failure (a 500), not the file's.
      if (child.pid === undefined) {
        clearTimeout(timer);
        reject(error);
      }
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve(outcome ?? { ok: false, reason: 'limits', detail: deathDetail(stderr, code, signal) });
    });
    child.send(input, () => {}); // a process that died before reading its input: its 'close' says why
  });
}

/** Why a process ended without an outcome: its watchdog's line, V8's fatal error, or its exit status. */
function deathDetail(stderr: string, code: number | null, signal: NodeJS.Signals | null): string {
  const said = /^funil-extract: (.*)$/m.exec(stderr)?.[1] ?? /FATAL ERROR: (.*)$/m.exec(stderr)?.[1];
  const status = signal ? `killed by ${signal}` : `exited with code ${code}`;
  return said ? `${said} (${status})` : status;
}
