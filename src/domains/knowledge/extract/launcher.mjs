// The extraction launcher: a thread of the server that starts, watches and ends the extraction processes
// (child/main.mjs); run-child.ts is its front on the main thread. It exists because fork() copies the
// server's page tables and blocks the thread that calls it: 7.7 ms median and 25 ms at worst per process
// for a server of 450 MB (measured in the bench's fairness line, 230 forks), during which, on the main
// thread, every organisation's requests stood still. Here it blocks only this thread.
// Plain JavaScript like child/ (type-checked through JSDoc): the thread starts with no TypeScript loader.
//
// Messages from the front: { type: 'run', id, input, limits, niceness, owner? } and { type: 'cancel', id }.
// Answers: { id, pid } (its process started, or taken from its organisation's warm ones), then { id,
// outcome } (the process is gone, or kept warm for the same organisation's next file: `owner`), { id,
// cancelled: true } (killed for a cancelled request, and gone), or { id, error } (no process could be
// started: the server's failure).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { childEntry } from './child-bundle.mjs';

/** @typedef {import('./child/main.mjs').ExtractionInput} ExtractionInput */
/** @typedef {import('./child/main.mjs').ExtractionOutcome} ExtractionOutcome */
/** @typedef {{ timeoutMs: number, maxRssMb: number, maxOldGenerationSizeMb: number }} Limits */
/** @typedef {import('node:child_process').ChildProcess} ChildProcess */
/** @typedef {{ type: 'run', id: number, input: ExtractionInput, limits: Limits, niceness: number, owner?: string } | { type: 'cancel', id: number }} Request */

/** V8 writes why it gave up (the "FATAL ERROR" line) within its first few KB of stderr. */
const STDERR_KEPT_CHARS = 16 * 1024;

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);

/**
 * Where this thread watches its processes itself: every 25 ms it reads each working process's resident
 * memory (ArrayBuffers live outside the heap limit, and libraries inflate into them: pdf.js a whole
 * content stream, JSZip a whole zip entry) and kills the process past its budget; and each process is
 * started through util-linux's `setpriv --pdeathsig KILL`, so the kernel kills it once this thread is
 * gone (the server exited, even with SIGKILL, or the thread died): no extraction outlives the timer
 * that bounds it, even one stuck inside a parser. Elsewhere (no /proc, no setpriv) each process runs a
 * watchdog thread of its own (child/watchdog.mjs) doing both, at about 0.1 s of CPU per file.
 */
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find(executable);
const WATCHED_HERE = !workerData?.ownWatchdog && SETPRIV !== undefined && fs.existsSync(`/proc/${process.pid}/status`);
const MEMORY_CHECK_MS = 25;
const MB = 1024 * 1024;

/** @param {string} file */
function executable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
/** @type {Map<number, () => void>} the cancel of each extraction under way */
const cancels = new Map();

port.on('message', (/** @type {Request} */ request) => {
  if (request.type === 'cancel') cancels.get(request.id)?.();
  else run(request);
});

/**
 * Processes started ahead, waiting for a file of their OS priority: starting Node (≈ 40–50 ms of CPU,
 * ≈ 100 ms on a slow machine) is most of what a small file costs. A file takes the oldest spare of its
 * priority, and a new one starts once that file's process is gone (or REFILL_AFTER_MS later). Idle, a
 * spare holds no file, no secret (empty environment) and no event-loop reference, and it ends with its
 * server (the parent-death signal, or its watchdog, and the IPC channel closing).
 * Per priority, so that a flooding organisation's file (nice 19) neither takes nor lowers the processes
 * waiting for the others' files, and its own next process does not start at the server's priority.
 * Two of each: with one, an organisation sending files one after the other got a spare started a median
 * 95 ms earlier, often still starting; with two, 166–169 ms (bench fairness line). At most four idle
 * processes (two at 0, two at BACKGROUND_NICENESS once an organisation has flooded), each about 9 MB of
 * memory of its own (45 MB resident, most of it Node's binary, shared).
 * @type {Map<number, { child: ChildProcess, limits: string }[]>}
 */
const spares = new Map();
const SPARES_PER_PRIORITY = 2;

/**
 * @param {Limits} limits
 * @param {number} niceness
 */
function startProcess(limits, niceness) {
  // Plain JavaScript: no TypeScript loader (or any other flag) inherited from `tsx` or NODE_OPTIONS.
  const node = [
    process.execPath,
    `--max-old-space-size=${limits.maxOldGenerationSizeMb}`,
    '--max-semi-space-size=16',
    childEntry(),
    ...(WATCHED_HERE ? [] : ['--own-watchdog', String(limits.maxRssMb), String(process.pid)]),
  ];
  const [command, ...args] = WATCHED_HERE ? [/** @type {string} */ (SETPRIV), '--pdeathsig', 'KILL', ...node] : node;
  const child = spawn(command, args, {
    env: {},
    serialization: 'advanced', // the bytes travel as a typed array, not as JSON
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  if (niceness) setNiceness(child, niceness);
  return child;
}

/**
 * Lowering a priority needs no privilege, but a sandbox may refuse it: the extraction then runs as it is.
 * @param {ChildProcess} child
 * @param {number} niceness
 */
function setNiceness(child, niceness) {
  if (child.pid === undefined) return;
  try {
    os.setPriority(child.pid, niceness);
  } catch {
    // refused, or already gone (its 'close' says why)
  }
}

/**
 * How long a file's process runs before its replacement spare starts anyway. A small file's process is
 * gone sooner, and its replacement starts then: started at once, beside it, the replacement's ≈ 50 ms of
 * CPU competed with the file's own process and its request (bench fairness line, a small Markdown file
 * alone: median 51–58 ms with the start at once, 45–46 after the process). A long one does not leave its
 * priority a spare short for long.
 */
const REFILL_AFTER_MS = 100;

/**
 * A process for one file at this OS priority: its organisation's warm process (`owner`) when one waits,
 * else the spare of that priority when it was started with these limits and is alive, else a new one;
 * and `refill`, which starts the next spare (call it once the file's process is gone or kept warm; it
 * runs once, and by itself after REFILL_AFTER_MS).
 * @param {Limits} limits
 * @param {number} niceness
 * @param {string | undefined} owner
 */
function extractionProcess(limits, niceness, owner) {
  const key = `${limits.maxRssMb}/${limits.maxOldGenerationSizeMb}`;
  const kept = owner === undefined ? undefined : takeWarm(warmKey(owner, niceness, key));
  if (kept) {
    holdsEventLoop(kept.child, true);
    return { child: kept.child, refill: () => {}, uses: kept.uses };
  }
  const waiting = spares.get(niceness) ?? [];
  spares.set(niceness, waiting);
  /** @type {ChildProcess | undefined} */
  let child;
  // The oldest first: the most likely to have finished starting.
  while (!child && waiting.length) {
    const ready = /** @type {{ child: ChildProcess, limits: string }} */ (waiting.shift());
    if (ready.limits === key && ready.child.exitCode === null && ready.child.signalCode === null && ready.child.connected) {
      child = ready.child;
    } else ready.child.kill('SIGKILL');
  }
  child ??= startProcess(limits, niceness);
  holdsEventLoop(child, true);
  let refilled = false;
  const refill = () => {
    clearTimeout(timer);
    if (refilled) return;
    refilled = true;
    setImmediate(() => topUp(waiting, limits, niceness, key));
  };
  const timer = setTimeout(refill, REFILL_AFTER_MS);
  return { child, refill, uses: 0 };
}

/**
 * Processes kept warm for the next file of the organisation whose file they just read (`owner`): starting
 * Node is most of what a small file costs (130–170 ms of CPU for a Markdown file on the bench's EPYC),
 * and an organisation sending files one after another paid it for each, about 1.3 cores for B alone in
 * the fairness line. A process only ever reads one organisation's files, so what a hostile file could
 * leave in it (a polluted prototype, a parser's state) reaches that organisation's own later files at
 * most, never another's. It is kept only after a file it read without fault (no refusal, limit or
 * cancel), only for the kinds whose parsers are small and pure (Markdown, HTML, text: pdf.js, exceljs
 * and SheetJS keep state and cost far more than Node's start), for at most WARM_USES files, while its
 * resident memory is under WARM_MAX_RSS_MB, and for WARM_IDLE_MS without a file. One per organisation,
 * priority and limits; at most WARM_MAX idle in all (the least recently used goes first). An idle one
 * keeps nothing alive, like a spare, and dies with the server the same way.
 * @type {Map<string, { child: ChildProcess, uses: number, timer: NodeJS.Timeout }>}
 */
const warm = new Map();
const WARM_KINDS = new Set(['markdown', 'mdx', 'html', 'text']);
const WARM_USES = 100;
const WARM_IDLE_MS = workerData?.warmIdleMs ?? 10_000;
const WARM_MAX = 8;
const WARM_MAX_RSS_MB = 160;

/**
 * @param {string} owner
 * @param {number} niceness
 * @param {string} limitsKey
 */
const warmKey = (owner, niceness, limitsKey) => `${niceness}/${limitsKey}/${owner}`;

/** @param {string} key */
function takeWarm(key) {
  const kept = warm.get(key);
  if (!kept) return undefined;
  warm.delete(key);
  clearTimeout(kept.timer);
  kept.child.removeAllListeners('close');
  return kept.child.exitCode === null && kept.child.signalCode === null && kept.child.connected ? kept : undefined;
}

/**
 * Keeps `child` for its organisation's next file, or says it cannot be (the caller then ends it).
 * @param {ChildProcess} child
 * @param {string} key
 * @param {number} uses files it has read
 */
function keepWarm(child, key, uses) {
  if (uses >= WARM_USES || warm.has(key) || child.pid === undefined || residentMb(child.pid) > WARM_MAX_RSS_MB) return false;
  child.removeAllListeners('message');
  child.removeAllListeners('close');
  child.removeAllListeners('error');
  child.stderr?.removeAllListeners('data');
  child.on('error', () => {});
  child.stderr?.resume(); // nobody keeps its lines now; the pipe must not fill
  holdsEventLoop(child, false);
  const timer = setTimeout(() => warm.get(key)?.child === child && (warm.delete(key), child.kill('SIGKILL')), WARM_IDLE_MS);
  timer.unref();
  child.once('close', () => warm.get(key)?.child === child && (clearTimeout(timer), warm.delete(key)));
  warm.set(key, { child, uses, timer });
  while (warm.size > WARM_MAX) {
    const [oldest, entry] = /** @type {[string, { child: ChildProcess, timer: NodeJS.Timeout }]} */ (warm.entries().next().value);
    warm.delete(oldest);
    clearTimeout(entry.timer);
    entry.child.kill('SIGKILL');
  }
  return true;
}

/**
 * Starts spares until SPARES_PER_PRIORITY wait at this priority, one per turn of this thread's loop
 * (each start blocks it for milliseconds).
 * @param {{ child: ChildProcess, limits: string }[]} waiting
 * @param {Limits} limits
 * @param {number} niceness
 * @param {string} key
 */
function topUp(waiting, limits, niceness, key) {
  if (waiting.length >= SPARES_PER_PRIORITY) return;
  const next = startProcess(limits, niceness);
  next.on('error', () => {}); // one that could not start is never used: it is not 'connected'
  holdsEventLoop(next, false);
  waiting.push({ child: next, limits: key });
  setImmediate(() => topUp(waiting, limits, niceness, key));
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
function run({ id, input, limits, niceness, owner }) {
  /** @type {ChildProcess} */
  let child;
  /** @type {() => void} */
  let refill;
  /** files the process read before this one */
  let uses;
  try {
    ({ child, refill, uses } = extractionProcess(limits, niceness, owner));
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
  /** @type {string | undefined} why this thread killed it */
  let killedFor;
  const unwatch = watchMemory(child, limits.maxRssMb, (why) => {
    killedFor ??= why;
    child.kill('SIGKILL');
  });
  cancels.set(id, () => {
    cancelled = true;
    child.kill('SIGKILL');
  });
  child.once('message', (/** @type {ExtractionOutcome} */ result) => {
    const reusable = result.ok && !outcome && !cancelled && !killedFor && owner !== undefined && WARM_KINDS.has(input.kind);
    if (reusable && keepWarm(child, warmKey(owner, niceness, `${limits.maxRssMb}/${limits.maxOldGenerationSizeMb}`), uses + 1)) {
      clearTimeout(timer);
      unwatch();
      cancels.delete(id);
      refill();
      port.postMessage({ id, outcome: result });
    } else settle(result);
  });
  child.on('error', (error) => {
    // A process that could not start is the server's failure (a 500), not the file's.
    if (child.pid === undefined) {
      clearTimeout(timer);
      unwatch();
      cancels.delete(id);
      port.postMessage({ id, error: String(error) });
    }
  });
  child.once('close', (code, killedBy) => {
    refill();
    if (child.pid === undefined) return; // answered by 'error'
    clearTimeout(timer);
    unwatch();
    cancels.delete(id);
    if (cancelled && !outcome) port.postMessage({ id, cancelled: true });
    else
      port.postMessage({ id, outcome: outcome ?? { ok: false, reason: 'limits', detail: deathDetail(killedFor, stderr, code, killedBy) } });
  });
  child.send(input, () => {}); // a process that died before reading its input: its 'close' says why
}

/** @type {Map<ChildProcess, { maxRssMb: number, overBudget(why: string): void }>} working processes whose memory this thread checks */
const watched = new Map();
/** @type {NodeJS.Timeout | undefined} */
let memoryTimer;

/**
 * Checks the process's resident memory every 25 ms until the returned function is called (WATCHED_HERE).
 * @param {ChildProcess} child
 * @param {number} maxRssMb
 * @param {(why: string) => void} overBudget
 */
function watchMemory(child, maxRssMb, overBudget) {
  if (!WATCHED_HERE || child.pid === undefined) return () => {};
  watched.set(child, { maxRssMb, overBudget });
  memoryTimer ??= setInterval(checkMemory, MEMORY_CHECK_MS);
  return () => {
    watched.delete(child);
    if (watched.size) return;
    clearInterval(memoryTimer);
    memoryTimer = undefined;
  };
}

function checkMemory() {
  for (const [child, { maxRssMb, overBudget }] of watched) {
    const rssMb = residentMb(/** @type {number} */ (child.pid));
    if (rssMb > maxRssMb) overBudget(`memory ${Math.round(rssMb)} MB, over the ${maxRssMb} MB budget`);
  }
}

/**
 * The process's resident memory (0 once it is gone).
 * @param {number} pid
 */
function residentMb(pid) {
  try {
    const kb = /^VmRSS:\s*(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? 0 : (Number(kb) * 1024) / MB;
  } catch {
    return 0;
  }
}

/**
 * Why a process ended without an outcome: why this thread killed it, its own watchdog's line, V8's fatal
 * error, or its exit status.
 * @param {string | undefined} killedFor
 * @param {string} stderr
 * @param {number | null} code
 * @param {NodeJS.Signals | null} signal
 */
function deathDetail(killedFor, stderr, code, signal) {
  const said = killedFor ?? /^funil-extract: (.*)$/m.exec(stderr)?.[1] ?? /FATAL ERROR: (.*)$/m.exec(stderr)?.[1];
  const status = signal ? `killed by ${signal}` : `exited with code ${code}`;
  return said ? `${said} (${status})` : status;
}
