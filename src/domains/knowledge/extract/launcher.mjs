// The extraction launcher: a thread of the server that starts, watches and ends the extraction processes
// (child/main.mjs); run-child.ts is its front on the main thread. It exists because fork() copies the
// server's page tables and blocks the thread that calls it: 7.7 ms median and 25 ms at worst per process
// for a server of 450 MB (measured in the bench's fairness line, 230 forks), during which, on the main
// thread, every organisation's requests stood still. Here it blocks only this thread.
// Plain JavaScript like child/ (type-checked through JSDoc): the thread starts with no TypeScript loader.
//
// Messages from the front: { type: 'run', id, input, limits, niceness } and { type: 'cancel', id }.
// Answers: { id, pid } (its process started), then { id, outcome } (the process is gone), { id,
// cancelled: true } (killed for a cancelled request, and gone), or { id, error } (no process could be
// started: the server's failure).
import { fork } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { parentPort } from 'node:worker_threads';

/** @typedef {import('./child/main.mjs').ExtractionInput} ExtractionInput */
/** @typedef {import('./child/main.mjs').ExtractionOutcome} ExtractionOutcome */
/** @typedef {{ timeoutMs: number, maxRssMb: number, maxOldGenerationSizeMb: number }} Limits */
/** @typedef {import('node:child_process').ChildProcess} ChildProcess */
/** @typedef {{ type: 'run', id: number, input: ExtractionInput, limits: Limits, niceness: number } | { type: 'cancel', id: number }} Request */

const CHILD_ENTRY = fileURLToPath(new URL('./child/main.mjs', import.meta.url));
/** V8 writes why it gave up (the "FATAL ERROR" line) within its first few KB of stderr. */
const STDERR_KEPT_CHARS = 16 * 1024;

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
/** @type {Map<number, () => void>} the cancel of each extraction under way */
const cancels = new Map();

port.on('message', (/** @type {Request} */ request) => {
  if (request.type === 'cancel') cancels.get(request.id)?.();
  else run(request);
});

/**
 * One process started ahead, waiting for its file: starting Node and the watchdog thread (≈ 40–50 ms of
 * CPU, ≈ 100 ms on a slow machine) is most of what a small file costs. The next file takes it; the one
 * after starts a new one meanwhile. Idle, it holds no file, no secret (empty environment) and no
 * event-loop reference, and it ends with its server (its watchdog, and the IPC channel closing).
 * It starts at the OS priority of the file before it: after a flooding organisation's file (nice 19) the
 * next is likely that organisation's too, and its start-up then yields the CPU to other organisations'
 * requests instead of taking it at the server's priority. A file of higher priority given a lower spare
 * raises it when it may (a process needs privilege to do that), else gets a process of its own.
 * @type {{ child: ChildProcess, limits: string, niceness: number } | undefined}
 */
let spare;

/**
 * @param {Limits} limits
 * @param {number} niceness
 */
function startProcess(limits, niceness) {
  const child = fork(CHILD_ENTRY, [String(limits.maxRssMb), String(process.pid)], {
    // Plain JavaScript: no TypeScript loader (or any other flag) inherited from `tsx` or NODE_OPTIONS.
    execArgv: [`--max-old-space-size=${limits.maxOldGenerationSizeMb}`, '--max-semi-space-size=16'],
    env: {},
    serialization: 'advanced', // the bytes travel as a typed array, not as JSON
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  if (niceness) setNiceness(child, niceness);
  return child;
}

/**
 * Whether the process now runs at this OS priority. Lowering a priority needs no privilege, but a sandbox
 * may refuse it (the extraction then runs as it is, and this says yes); raising one needs privilege.
 * @param {ChildProcess} child
 * @param {number} niceness
 */
function setNiceness(child, niceness) {
  if (child.pid === undefined) return true;
  try {
    os.setPriority(child.pid, niceness);
    return true;
  } catch {
    try {
      return niceness >= os.getPriority(child.pid);
    } catch {
      return false; // gone: the caller starts another
    }
  }
}

/**
 * A process for one file at this OS priority: the spare when it was started with these limits and is
 * alive, else a new one; then, once the file is on its way, the next spare.
 * @param {Limits} limits
 * @param {number} niceness
 */
function extractionProcess(limits, niceness) {
  const key = `${limits.maxRssMb}/${limits.maxOldGenerationSizeMb}`;
  const ready = spare;
  spare = undefined;
  const alive = ready && ready.limits === key && ready.child.exitCode === null && ready.child.signalCode === null && ready.child.connected;
  const usable = alive && (ready.niceness === niceness || setNiceness(ready.child, niceness));
  if (ready && !usable) ready.child.kill('SIGKILL');
  const child = usable ? ready.child : startProcess(limits, niceness);
  holdsEventLoop(child, true);
  // After this file has been handed over (fork() blocks this thread for milliseconds).
  setImmediate(() => {
    if (spare) return;
    const next = startProcess(limits, niceness);
    next.on('error', () => {}); // one that could not start is never used: it is not 'connected'
    holdsEventLoop(next, false);
    spare = { child: next, limits: key, niceness };
  });
  return child;
}

/**
 * An idle spare keeps nothing alive (its handle, IPC channel and stderr pipe unreferenced); a working one does.
 * @param {ChildProcess} child
 * @param {boolean} hold
 */
function holdsEventLoop(child, hold) {
  const handles = /** @type {({ ref?(): void, unref?(): void } | null | undefined)[]} */ ([child, child.channel, child.stderr]);
  for (const handle of handles) {
    if (hold) handle?.ref?.();
    else handle?.unref?.();
  }
}

/** @param {Extract<Request, { type: 'run' }>} request */
function run({ id, input, limits, niceness }) {
  /** @type {ChildProcess} */
  let child;
  try {
    child = extractionProcess(limits, niceness);
  } catch (error) {
    return port.postMessage({ id, error: String(error) });
  }
  // The front kills it by pid should this thread die with it running (its timer would die here too).
  if (child.pid !== undefined) port.postMessage({ id, pid: child.pid });
  /** @type {ExtractionOutcome | undefined} */
  let outcome;
  let cancelled = false;
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (/** @type {string} */ chunk) => {
    if (stderr.length < STDERR_KEPT_CHARS) stderr += chunk;
  });
  /** @param {ExtractionOutcome} result */
  const settle = (result) => {
    outcome ??= result;
    child.kill('SIGKILL');
  };
  const timer = setTimeout(() => settle({ ok: false, reason: 'limits', detail: `over ${limits.timeoutMs} ms` }), limits.timeoutMs);
  cancels.set(id, () => {
    cancelled = true;
    child.kill('SIGKILL');
  });
  child.once('message', (/** @type {ExtractionOutcome} */ result) => settle(result));
  child.on('error', (error) => {
    // A process that could not start is the server's failure (a 500), not the file's.
    if (child.pid === undefined) {
      clearTimeout(timer);
      cancels.delete(id);
      port.postMessage({ id, error: String(error) });
    }
  });
  child.once('close', (code, killedBy) => {
    if (child.pid === undefined) return; // answered by 'error'
    clearTimeout(timer);
    cancels.delete(id);
    if (cancelled && !outcome) port.postMessage({ id, cancelled: true });
    else port.postMessage({ id, outcome: outcome ?? { ok: false, reason: 'limits', detail: deathDetail(stderr, code, killedBy) } });
  });
  child.send(input, () => {}); // a process that died before reading its input: its 'close' says why
}

/**
 * Why a process ended without an outcome: its watchdog's line, V8's fatal error, or its exit status.
 * @param {string} stderr
 * @param {number | null} code
 * @param {NodeJS.Signals | null} signal
 */
function deathDetail(stderr, code, signal) {
  const said = /^funil-extract: (.*)$/m.exec(stderr)?.[1] ?? /FATAL ERROR: (.*)$/m.exec(stderr)?.[1];
  const status = signal ? `killed by ${signal}` : `exited with code ${code}`;
  return said ? `${said} (${status})` : status;
}
