// One extraction, in a Node process (child/main.mjs) of its own, within three limits:
// - a heap limit (--max-old-space-size): V8 ends the process when its heap is full;
// - a memory budget for the whole process, ArrayBuffers outside the heap included, checked by the
//   launcher thread (or, where it cannot, by the process's own watchdog thread, child/watchdog.mjs);
// - a time limit: the process is killed (SIGKILL), even one stuck in a loop that never yields;
// and it never outlives the server (the kernel's parent-death signal, or its own watchdog).
// A process, not a worker thread: on Node 20 a worker that reaches its heap limit inside one large
// allocation aborts the whole server (nodejs/node#47224, reproduced in test/knowledge/extract.test.ts),
// and no cap on the libraries' inputs rules that out. A process also gets an empty environment (no
// database URL or secret for a parser to read) and its own address space.
// The processes are started, timed and killed by the launcher thread (launcher.mjs: fork() blocks the
// thread that calls it, and it is not the one serving requests), processes ahead as spares; a process is
// discarded after its file, or kept for the next file of the same organisation after a small parser's
// file read without fault. This is its front: one request per extraction.
// How many run at once, whose turn it is and at which OS priority are decided by the caller (slots.ts,
// index.ts). Whatever the process does, the caller gets an outcome, never a crash; a cancelled request
// (`signal`) kills its process.
import { Worker } from 'node:worker_threads';
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

const LAUNCHER = new URL('./launcher.mjs', import.meta.url);

type LauncherAnswer = { id: number } & ({ pid: number } | { outcome: ExtractionOutcome } | { cancelled: true } | { error: string });

interface Pending {
  resolve(outcome: ExtractionOutcome): void;
  reject(error: Error): void;
  signal?: AbortSignal;
  /** Its process, once started: killed from here if the launcher thread dies first. */
  pid?: number;
  onProcess?: (pid: number) => void;
}

let launcher: Worker | undefined;
const pending = new Map<number, Pending>();
let lastId = 0;

/**
 * The launcher thread, started on first use; it keeps the server alive only while an extraction is under
 * way. Exported for tests, which may also start it with `ownWatchdog` (each process then watches itself,
 * as where the launcher cannot: no /proc or no setpriv) or with a shorter `warmIdleMs` (launcher.mjs).
 */
export function launcherThread(options: { ownWatchdog?: boolean; warmIdleMs?: number } = {}): Worker {
  if (launcher) return launcher;
  // No TypeScript loader (execArgv) and no copy of the server's environment: the thread needs neither.
  const thread = new Worker(LAUNCHER, { execArgv: [], env: {}, workerData: options });
  thread.on('message', (answer: LauncherAnswer) => {
    const waiting = pending.get(answer.id);
    if (!waiting) return;
    if ('pid' in answer) {
      waiting.pid = answer.pid;
      return waiting.onProcess?.(answer.pid);
    }
    pending.delete(answer.id);
    if (!pending.size) thread.unref();
    if ('outcome' in answer) waiting.resolve(answer.outcome);
    else if ('cancelled' in answer) waiting.reject(abortReason(waiting.signal!));
    else waiting.reject(new Error(`the extraction process could not start: ${answer.error}`));
  });
  // The thread failing is the server's failure (a 500) for the files under way; the next file starts another.
  // Its processes lose their time limit with it: they are killed here, not left running.
  const lost = (error: Error) => {
    if (launcher === thread) launcher = undefined;
    for (const waiting of pending.values()) {
      if (waiting.pid !== undefined) killQuietly(waiting.pid);
      waiting.reject(error);
    }
    pending.clear();
  };
  thread.on('error', lost);
  thread.on('exit', (code) => lost(new Error(`the extraction launcher exited with code ${code}`)));
  thread.unref();
  return (launcher = thread);
}

export interface ExtractionRun {
  /** The request's: once aborted, the process is killed and the promise rejects with its reason. */
  signal?: AbortSignal;
  /** The process's OS priority: 0 (the server's) to 19 (the lowest). */
  niceness?: number;
  /** The caller is done with the bytes, whose memory may then move to the launcher thread instead of being copied (HAND_OVER_BYTES). */
  handOver?: boolean;
  /**
   * The organisation the file belongs to: its process may be kept warm for that organisation's next
   * file, and only that organisation's (launcher.mjs). Without it the process is used for this file only.
   */
  owner?: string;
  /** Told the pid of the process that reads the file (for tests: which process read which file). */
  onProcess?: (pid: number) => void;
}

/**
 * Resolves with the outcome once the process is gone (its memory released) or kept warm for the same
 * owner's next file, or with why it died; rejects with the signal's reason once the process is killed for
 * a cancelled request.
 */
export function runExtraction(
  input: ExtractionInput,
  limits: ExtractionLimits,
  { signal, niceness = 0, handOver = false, owner, onProcess }: ExtractionRun = {},
): Promise<ExtractionOutcome> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const thread = launcherThread();
    const id = ++lastId;
    const cancel = () => thread.postMessage({ type: 'cancel', id });
    signal?.addEventListener('abort', cancel, { once: true });
    const done = () => signal?.removeEventListener('abort', cancel);
    pending.set(id, {
      resolve: (outcome) => (done(), resolve(outcome)),
      reject: (error) => (done(), reject(error)),
      signal,
      onProcess,
    });
    if (pending.size === 1) thread.ref();
    thread.postMessage({ type: 'run', id, input, limits, niceness, owner }, handOver ? handedOver(input.bytes) : []);
  });
}

/**
 * From this size a file handed over moves to the launcher thread (a transfer) rather than being copied:
 * the copy took the event loop about 11 ms per 1.7 MB file on this machine. Only a typed array that is
 * its whole buffer moves (a view into Node's shared pool of small buffers must not).
 */
const HAND_OVER_BYTES = 64 * 1024;

function handedOver(bytes: Uint8Array): ArrayBuffer[] {
  const { buffer } = bytes;
  const whole = buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength;
  return whole && bytes.byteLength >= HAND_OVER_BYTES ? [buffer] : [];
}

function killQuietly(pid: number) {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** The reason an AbortSignal carries, as an Error (AbortController.abort() gives a DOMException, which is one). */
export function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason));
}
