// One extraction, one new Node process (child/main.mjs), discarded afterwards, within three limits:
// - a heap limit (--max-old-space-size): V8 ends the process when its heap is full;
// - a memory budget for the whole process, ArrayBuffers outside the heap included: the process's own
//   watchdog thread (child/watchdog.mjs), which also ends it if the server dies first;
// - a time limit: the server kills the process (SIGKILL), even one stuck in a loop that never yields.
// A process, not a worker thread: on Node 20 a worker that reaches its heap limit inside one large
// allocation aborts the whole server (nodejs/node#47224, reproduced in test/knowledge/extract.test.ts),
// and no cap on the libraries' inputs rules that out. A process also gets an empty environment (no
// database URL or secret for a parser to read) and its own address space.
// How many run at once, whose turn it is and at which OS priority are decided by the caller (slots.ts,
// index.ts). Whatever the process does, the caller gets an outcome, never a crash; a cancelled request
// (`signal`) kills its process.
import { fork } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
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
/** V8 writes why it gave up (the "FATAL ERROR" line) within its first few KB of stderr. */
const STDERR_KEPT_CHARS = 16 * 1024;

/**
 * Resolves once the process is gone (its memory released), with its outcome or why it died; rejects with
 * the signal's reason once the process is killed for a cancelled request. `niceness`: the process's OS
 * priority (0, the server's, to 19, the lowest).
 */
export function runExtraction(
  input: ExtractionInput,
  limits: ExtractionLimits,
  signal?: AbortSignal,
  niceness = 0,
): Promise<ExtractionOutcome> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const child = fork(CHILD_ENTRY, [String(limits.maxRssMb), String(process.pid)], {
      // Plain JavaScript: no TypeScript loader (or any other flag) inherited from `tsx` or NODE_OPTIONS.
      execArgv: [`--max-old-space-size=${limits.maxOldGenerationSizeMb}`, '--max-semi-space-size=16'],
      env: {},
      serialization: 'advanced', // the bytes travel as a typed array, not as JSON
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    if (niceness && child.pid !== undefined) {
      try {
        os.setPriority(child.pid, niceness);
      } catch {
        // Lowering a priority needs no privilege, but a sandbox may refuse it: the extraction runs as it is.
      }
    }
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
    const cancel = () => child.kill('SIGKILL');
    signal?.addEventListener('abort', cancel, { once: true });
    child.once('message', (result: ExtractionOutcome) => settle(result));
    child.on('error', (error) => {
      // A process that could not start is the server's failure (a 500), not the file's.
      if (child.pid === undefined) {
        clearTimeout(timer);
        signal?.removeEventListener('abort', cancel);
        reject(error);
      }
    });
    child.once('close', (code, killedBy) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', cancel);
      if (signal?.aborted && !outcome) reject(abortReason(signal));
      else resolve(outcome ?? { ok: false, reason: 'limits', detail: deathDetail(stderr, code, killedBy) });
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

/** The reason an AbortSignal carries, as an Error (AbortController.abort() gives a DOMException, which is one). */
export function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason));
}
