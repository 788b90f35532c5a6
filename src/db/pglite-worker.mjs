// The embedded database's own thread: it owns the PGlite instance and answers the main thread's calls
// (Prisma driver-adapter calls, migration SQL, LISTEN) over its port, so PostgreSQL's work runs on a
// second core while the main thread serves HTTP. The main side is pglite-remote.ts.
// Results and errors are what they were on the main thread: pglite-prisma-adapter runs here, on this
// thread's PGlite (its statements prepared once, see pglite-prepared.mjs). PGlite is one connection and runs one transaction at a time: `query` outside a
// transaction waits for it, as does the next `startTransaction`, so isolation is PGlite's own.
// Plain JavaScript (type-checked through JSDoc), so the thread starts without a TypeScript loader.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { unaccent } from '@electric-sql/pglite/contrib/unaccent';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { preparedClient } from './pglite-prepared.mjs';

/** @typedef {{ dir?: string, template?: ArrayBuffer }} WorkerOptions */
/** @typedef {{ sql: string, args: unknown[], argTypes: unknown[] }} AdapterQuery */
/**
 * @typedef {{ op: 'query' | 'execute', tx?: number, query: AdapterQuery }
 *   | { op: 'begin', isolationLevel?: string }
 *   | { op: 'commit' | 'rollback', tx: number }
 *   | { op: 'exec', sql: string }
 *   | { op: 'rows', sql: string, params?: unknown[] }
 *   | { op: 'listen', channel: string }
 *   | { op: 'unlisten', listener: number }
 *   | { op: 'close' }} Call
 */
/** An error as it crosses the thread: its name, message, stack, primitive own fields and a driver adapter's cause. */
/** @typedef {{ name: string, message: string, stack?: string, fields: Record<string, unknown>, cause?: unknown }} SerializedError */
/**
 * What the thread posts: `ready` once PGlite is open (or `failed`), each call's `result` or `error`
 * under its id, and a LISTEN listener's id on each notification.
 * @typedef {{ ready: true } | { failed: SerializedError } | { id: number, result: unknown } | { id: number, error: SerializedError } | { notify: number }} Reply
 */

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
/** @param {Reply} reply */
const post = (reply) => port.postMessage(reply);

/** @param {unknown} e @returns {SerializedError} */
function serializeError(e) {
  if (!(e instanceof Error)) return { name: 'Error', message: String(e), fields: {} };
  /** @type {Record<string, unknown>} */
  const fields = {};
  // SQLSTATE `code`, `detail`, `constraint`… of PGlite's DatabaseError, for the callers that read them.
  for (const [key, value] of Object.entries(e)) {
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) fields[key] = value;
  }
  // Prisma recognises a DriverAdapterError by its name and reads its `cause` ({kind, code, …}).
  const cause = e.name === 'DriverAdapterError' ? e.cause : undefined;
  return { name: e.name, message: e.message, stack: e.stack, fields, cause };
}

/** @param {WorkerOptions} options */
async function open({ dir, template }) {
  // Contrib extensions the migrations create (PostgreSQL servers ship them; PGlite loads them here).
  const extensions = { unaccent };
  if (dir) return PGlite.create(dir, { extensions });
  return PGlite.create(template ? { loadDataDir: new Blob([template]), extensions } : { extensions });
}

let lite;
try {
  lite = await open(/** @type {WorkerOptions} */ (workerData));
} catch (e) {
  post({ failed: serializeError(e) });
  port.close();
}

if (lite) {
  const db = lite;
  // The adapter's statements and raw queries (the job runner's, migrations') go through prepared
  // statements (pglite-prepared.mjs); the client offers the part of PGlite's interface the adapter uses.
  const client = preparedClient(db);
  const adapter = await new PrismaPGlite(/** @type {never} */ (client)).connect();
  /** Open transactions by id; PGlite holds its transaction lock until commit or rollback. */
  const transactions = new Map();
  /** @type {Map<number, () => Promise<void>>} */
  const listeners = new Map();
  let nextId = 1;

  /** @param {number | undefined} tx */
  const queryable = (tx) => {
    if (tx === undefined) return adapter;
    const found = transactions.get(tx);
    if (!found) throw new Error(`Transaction ${tx} is not open`);
    return found;
  };

  /** @param {Call} call @returns {Promise<unknown>} */
  async function handle(call) {
    switch (call.op) {
      case 'query':
        return queryable(call.tx).queryRaw(call.query);
      case 'execute':
        return queryable(call.tx).executeRaw(call.query);
      case 'begin': {
        const tx = await adapter.startTransaction(/** @type {never} */ (call.isolationLevel));
        const id = nextId++;
        transactions.set(id, tx);
        return { id, options: tx.options };
      }
      case 'commit':
      case 'rollback': {
        const tx = queryable(call.tx);
        transactions.delete(call.tx);
        return call.op === 'commit' ? tx.commit() : tx.rollback();
      }
      case 'exec':
        return void (await db.exec(call.sql));
      case 'rows':
        return (await client.query(call.sql, call.params)).rows;
      case 'listen': {
        const id = nextId++;
        listeners.set(id, await db.listen(call.channel, () => post({ notify: id })));
        return id;
      }
      case 'unlisten': {
        const unlisten = listeners.get(call.listener);
        listeners.delete(call.listener);
        return unlisten?.();
      }
      case 'close':
        await db.close();
        return undefined;
    }
  }

  port.on('message', (/** @type {Call & { id: number }} */ call) => {
    handle(call).then(
      (result) => post({ id: call.id, result }),
      (error) => post({ id: call.id, error: serializeError(error) }),
    );
  });
  post({ ready: true });
}
