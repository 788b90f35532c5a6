// The embedded database seen from the main thread: PGlite runs in a worker thread (pglite-worker.mjs)
// and this side offers what the rest of the code needs from it — a Prisma driver adapter, the raw
// SqlRunner and LISTEN — as calls over the thread's port. Each call is one message; the worker answers
// in its own time, so the main thread keeps serving requests while PostgreSQL works on another core.
//
// If the thread dies, every call under way and every later one fails at once with
// EmbeddedDatabaseStopped (a 500 to clients, /ready 503): nothing waits forever for an answer.
import { Worker } from 'node:worker_threads';
import type { SqlDriverAdapterFactory } from '@prisma/client/runtime/client';
import { log } from '../log.js';
import type { SqlRunner } from './migrate.js';
import type { Call, Reply, SerializedError, WorkerOptions } from './pglite-worker.mjs';

type SqlDriverAdapter = Awaited<ReturnType<SqlDriverAdapterFactory['connect']>>;
type Transaction = Awaited<ReturnType<SqlDriverAdapter['startTransaction']>>;
type SqlQuery = Parameters<SqlDriverAdapter['queryRaw']>[0];
type SqlResultSet = Awaited<ReturnType<SqlDriverAdapter['queryRaw']>>;
type IsolationLevel = Parameters<SqlDriverAdapter['startTransaction']>[0];

const WORKER_ENTRY = new URL('./pglite-worker.mjs', import.meta.url);
/** The adapter's own name, so Prisma treats it exactly as the adapter the worker runs. */
const ADAPTER_NAME = 'pglite-prisma-adapter';

export class EmbeddedDatabaseStopped extends Error {
  constructor(reason: string) {
    super(`The embedded database is not available: ${reason}`);
    this.name = 'EmbeddedDatabaseStopped';
  }
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

export class PGliteRemote {
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Map<number, () => void>();
  private nextId = 1;
  private stopped?: Error;
  private closing = false;

  readonly sql: SqlRunner = {
    script: async (sql) => void (await this.call({ op: 'exec', sql })),
    query: async <T>(sql: string, params?: unknown[]) => (await this.call({ op: 'rows', sql, params })) as T[],
  };

  /**
   * The thread itself. Exposed for the tests that stop it to check that a crash fails requests at
   * once; the rest of the code goes through the calls.
   */
  readonly thread: Worker;

  private constructor(thread: Worker) {
    this.thread = thread;
  }

  /** Starts the thread and waits until PGlite is open (an in-memory one when `dir` is absent). */
  static async start(options: { dir?: string; template?: Blob }): Promise<PGliteRemote> {
    const template = options.template ? await options.template.arrayBuffer() : undefined;
    const workerData: WorkerOptions = { dir: options.dir, template };
    // Plain JavaScript: no TypeScript loader inherited from `tsx`.
    const thread = new Worker(WORKER_ENTRY, { workerData, execArgv: [], transferList: template ? [template] : [] });
    const remote = new PGliteRemote(thread);
    await new Promise<void>((resolve, reject) => {
      const failed = (error: Error) => {
        thread.off('message', first);
        reject(error);
      };
      const first = (reply: Reply) => {
        thread.off('exit', exited);
        thread.off('error', failed);
        if ('failed' in reply) {
          void thread.terminate();
          reject(remoteError(reply.failed));
        } else resolve();
      };
      const exited = (code: number) => failed(new EmbeddedDatabaseStopped(`its thread exited with code ${code} while opening`));
      thread.once('message', first);
      thread.once('error', failed);
      thread.once('exit', exited);
    });
    remote.watch();
    return remote;
  }

  private watch() {
    this.thread.on('message', (reply: Reply) => this.receive(reply));
    this.thread.on('error', (error) => this.stop(`its thread failed (restart the server): ${error.stack ?? error}`));
    this.thread.on('exit', (code) => this.stop(`its thread exited with code ${code} (restart the server)`));
    // Idle, the thread does not keep the process alive (as PGlite on the main thread did not); a call
    // under way does (see call()).
    this.thread.unref();
  }

  /**
   * Each reply is acted on in a turn of the event loop of its own (setImmediate), not inside the port's
   * message handler: Node drains a worker's port without returning to the event loop for as long as
   * messages keep arriving (up to 1,000 at a time), and under concurrent requests each reply's
   * continuation queries again, so the replies kept coming: timers (Prisma's maxWait, deadlines),
   * sockets and /health waited until a burst of requests was done (a 5 ms timer fired after 170–350 ms
   * in the saturation test, test/platform/saturation.test.ts).
   */
  private receive(reply: Reply) {
    if ('notify' in reply) {
      const listener = this.listeners.get(reply.notify);
      if (listener) setImmediate(listener);
      return;
    }
    if (!('id' in reply)) return;
    const waiting = this.pending.get(reply.id);
    if (!waiting) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.thread.unref();
    if ('error' in reply) setImmediate(() => waiting.reject(remoteError(reply.error)));
    else setImmediate(() => waiting.resolve(reply.result));
  }

  private stop(reason: string) {
    if (this.stopped) return;
    this.stopped = new EmbeddedDatabaseStopped(this.closing ? 'it was closed' : reason);
    if (!this.closing) log.error('embedded database stopped', { reason });
    for (const waiting of this.pending.values()) waiting.reject(this.stopped);
    this.pending.clear();
  }

  /** Calls sent to the thread and not answered yet (the one it runs, and those queued behind it). */
  get callsUnderWay(): number {
    return this.pending.size;
  }

  call(call: Call): Promise<unknown> {
    if (this.stopped) return Promise.reject(this.stopped);
    const id = this.nextId++;
    if (this.pending.size === 0) this.thread.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.thread.postMessage({ ...call, id });
    });
  }

  /** LISTEN on `channel`; `onNotify` runs for each notification. Returns the unlisten function. */
  async listen(channel: string, onNotify: () => void): Promise<() => Promise<void>> {
    const listener = (await this.call({ op: 'listen', channel })) as number;
    this.listeners.set(listener, onNotify);
    return async () => {
      this.listeners.delete(listener);
      if (!this.stopped) await this.call({ op: 'unlisten', listener });
    };
  }

  /** A Prisma driver adapter whose every call runs in the thread. */
  adapterFactory(): SqlDriverAdapterFactory {
    return {
      provider: 'postgres',
      adapterName: ADAPTER_NAME,
      connect: async () => this.adapter(),
    };
  }

  private queryable(tx?: number) {
    return {
      provider: 'postgres' as const,
      adapterName: ADAPTER_NAME,
      queryRaw: async (query: SqlQuery) => (await this.call({ op: 'query', tx, query })) as SqlResultSet,
      executeRaw: async (query: SqlQuery) => (await this.call({ op: 'execute', tx, query })) as number,
    };
  }

  private adapter(): SqlDriverAdapter {
    return {
      ...this.queryable(),
      executeScript: async (sql: string) => void (await this.call({ op: 'exec', sql })),
      getConnectionInfo: () => ({ supportsRelationJoins: true }),
      // One transaction at a time: the worker answers once PGlite has begun it, after the one before.
      startTransaction: async (isolationLevel?: IsolationLevel): Promise<Transaction> => {
        const { id, options } = (await this.call({ op: 'begin', isolationLevel })) as { id: number; options: Transaction['options'] };
        return {
          ...this.queryable(id),
          options,
          commit: async () => void (await this.call({ op: 'commit', tx: id })),
          rollback: async () => void (await this.call({ op: 'rollback', tx: id })),
        };
      },
      dispose: async () => {},
    };
  }

  /** Closes PGlite (its files are complete on disk afterwards) and ends the thread. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    try {
      if (!this.stopped) await this.call({ op: 'close' });
    } finally {
      await this.thread.terminate();
    }
  }
}

/** The worker's error rebuilt on this side, with the fields the error mapping reads (name, cause, code). */
function remoteError(serialized: SerializedError): Error {
  const error = Object.assign(new Error(serialized.message), serialized.fields);
  error.name = serialized.name;
  if (serialized.cause !== undefined) error.cause = serialized.cause;
  if (serialized.stack) error.stack = serialized.stack;
  return error;
}
