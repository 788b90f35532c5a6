// One extraction, one new worker thread, discarded afterwards, within three limits:
// - a heap limit: V8 stops the worker, not the process, when its heap is full;
// - a memory watchdog: ArrayBuffers live outside the V8 heap, and libraries inflate into them (pdf.js
//   decompresses a whole content stream through DecompressionStream, JSZip a whole zip entry), so the
//   process's resident memory is sampled and the worker terminated once it grew past a budget;
// - a wall-clock limit: terminate() stops even a loop that never yields.
// A small cap on how many run at once keeps a burst of uploads from adding up. Whatever the worker
// does, the caller gets an outcome, never a crash.
// One limit of Node itself (nodejs/node#47224): a worker that reaches its heap limit inside a single
// allocation larger than the 16 MB of headroom Node grants to stop it aborts the whole process. The
// inflate cap (worker/limits.mjs) keeps the largest string a spreadsheet makes far below the heap limit;
// only a child process would rule it out entirely.
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import type { WorkerInput, WorkerOutcome } from './worker/worker.mjs';

export interface WorkerLimits {
  timeoutMs: number;
  /** How much the process's resident memory may grow while the worker runs. */
  maxRssGrowthMb: number;
  maxOldGenerationSizeMb: number;
  maxYoungGenerationSizeMb: number;
  stackSizeMb: number;
}

export const DEFAULT_WORKER_LIMITS: WorkerLimits = {
  timeoutMs: 20_000,
  maxRssGrowthMb: 768,
  maxOldGenerationSizeMb: 256,
  maxYoungGenerationSizeMb: 32,
  stackSizeMb: 4,
};

const WORKER_ENTRY = new URL('./worker/worker.mjs', import.meta.url);
const MAX_CONCURRENT = Math.max(1, Math.floor(os.availableParallelism() / 2));
const WATCHDOG_INTERVAL_MS = 25;
const MB = 1024 * 1024;

let running = 0;
const waiting: (() => void)[] = [];

export async function runExtractionWorker(input: WorkerInput, limits: WorkerLimits): Promise<WorkerOutcome> {
  if (running < MAX_CONCURRENT) running++;
  else await new Promise<void>((resolve) => waiting.push(resolve)); // the finishing run hands its slot over
  try {
    return await runOnce(input, limits);
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

function runOnce(input: WorkerInput, limits: WorkerLimits): Promise<WorkerOutcome> {
  return new Promise((resolve) => {
    const rssAtStart = process.memoryUsage.rss();
    const worker = new Worker(WORKER_ENTRY, {
      workerData: input,
      execArgv: [], // plain JavaScript: no TypeScript loader inherited from `tsx`, which would slow it down
      resourceLimits: {
        maxOldGenerationSizeMb: limits.maxOldGenerationSizeMb,
        maxYoungGenerationSizeMb: limits.maxYoungGenerationSizeMb,
        stackSizeMb: limits.stackSizeMb,
      },
    });
    const finish = (outcome: WorkerOutcome) => {
      clearTimeout(timer);
      clearInterval(watchdog);
      worker.removeAllListeners();
      worker.on('error', () => {}); // late errors of a worker being terminated
      // Resolve once the worker is gone, so its memory is released before the next one starts.
      void worker.terminate().finally(() => resolve(outcome));
    };
    const timer = setTimeout(() => finish({ ok: false, reason: 'limits', detail: `over ${limits.timeoutMs} ms` }), limits.timeoutMs);
    const watchdog = setInterval(() => {
      const grownMb = (process.memoryUsage.rss() - rssAtStart) / MB;
      if (grownMb > limits.maxRssGrowthMb) finish({ ok: false, reason: 'limits', detail: `memory grew ${Math.round(grownMb)} MB` });
    }, WATCHDOG_INTERVAL_MS);
    worker.once('message', (outcome: WorkerOutcome) => finish(outcome));
    worker.once('error', (error: Error & { code?: string }) =>
      finish({ ok: false, reason: error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'limits' : 'unreadable', detail: String(error) }),
    );
    worker.once('exit', (code) => finish({ ok: false, reason: 'limits', detail: `worker exited with code ${code}` }));
  });
}
