// PGlite for pglite-prisma-adapter, with prepared statements. PGlite's `query` parses, analyses and
// plans every statement anew, in six protocol round trips; Prisma sends the same few statements over
// and over. Here each SQL text is prepared once (a named statement, kept in a bounded cache) and then
// only bound and executed, in one round trip: about half the database thread's CPU on the deals list.
// Everything else is PGlite's own: its locks (one transaction at a time; a statement outside it waits),
// its parameter serializers and result parsers (parse.parseResults), its DatabaseError, and its
// transactions, so the adapter sees what `query` would have returned or thrown.
// Plain JavaScript (type-checked through JSDoc), like the worker thread that uses it.
import { parse, protocol } from '@electric-sql/pglite';

const { serialize } = protocol;

/** Prepared statements kept per connection; the least recently used is closed beyond this. */
export const STATEMENT_CACHE_SIZE = 250;

/**
 * SQLSTATEs after which a statement is prepared again, once: its result type changed under it (DDL
 * since it was prepared), or the server no longer has it.
 * @type {Set<string | undefined>}
 */
const STALE = new Set(['0A000', '26000']);

/** @typedef {import('@electric-sql/pglite').PGlite} PGlite */
/** @typedef {import('@electric-sql/pglite').Transaction} PGliteTransaction */
/** @typedef {import('@electric-sql/pglite').QueryOptions} QueryOptions */
/** @typedef {Parameters<typeof parse.parseResults>[1]} ParserMap */
/** @typedef {import('@electric-sql/pglite').Results} Results */
/** @typedef {import('@electric-sql/pglite').messages.BackendMessage} BackendMessage */
/** @typedef {{ name: string, paramTypes: number[], rowDescription?: BackendMessage }} Statement */

/** @param {Uint8Array[]} parts */
function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

/**
 * The client the adapter is given: `query` through prepared statements, the rest PGlite's.
 * @param {PGlite} lite
 */
export function preparedClient(lite) {
  /** @type {Map<string, Statement>} insertion order = least recently used first */
  const statements = new Map();
  /** Names dropped from the cache while still on the server: closed with the next preparation. */
  /** @type {string[]} */
  const orphans = [];
  let nextName = 1;

  /** PGlite's parsers merged with each options' own, by the options' parsers object. */
  /** @type {WeakMap<object, ParserMap>} */
  const merged = new WeakMap();
  /**
   * The parsers to read a result with, and the options without theirs. `parseResults` merges the
   * options' parsers (the adapter passes the same few on every call) into PGlite's, about 320 entries
   * (one per array type), on every call: 90 µs, twice a deals page. Merged once here. PGlite fills its
   * parsers once, when it opens (nothing here calls `refreshArrayTypes`).
   * @param {QueryOptions | undefined} options
   * @returns {[ParserMap, QueryOptions | undefined]}
   */
  function parsersOf(options) {
    const own = options?.parsers;
    if (!own) return [lite.parsers, options];
    let parsers = merged.get(own);
    if (!parsers) merged.set(own, (parsers = { ...lite.parsers, ...own }));
    return [parsers, { ...options, parsers: undefined }];
  }

  /**
   * Parses and describes `sql` as a new named statement (closing the least recently used one in the
   * same round trip when the cache is full).
   * @param {string} sql
   * @returns {Promise<Statement>}
   */
  async function prepare(sql) {
    if (statements.size >= STATEMENT_CACHE_SIZE) {
      const [oldSql, old] = statements.entries().next().value ?? [];
      if (oldSql !== undefined && old) {
        statements.delete(oldSql);
        orphans.push(old.name);
      }
    }
    // Closing fails only in an aborted transaction, where the parse fails too: then a name is lost.
    const parts = orphans.splice(0).map((orphan) => serialize.close({ type: 'S', name: orphan }));
    const name = `funil_${nextName++}`;
    parts.push(serialize.parse({ name, text: sql, types: [] }), serialize.describe({ type: 'S', name }), serialize.sync());
    const { messages } = await lite.execProtocol(concat(parts), { syncToFs: false });
    const statement = {
      name,
      paramTypes: parse.parseDescribeStatementResults(messages),
      rowDescription: messages.find((m) => m.name === 'rowDescription'),
    };
    statements.set(sql, statement);
    return statement;
  }

  /**
   * @param {string} sql
   * @param {unknown[]} params
   * @param {QueryOptions | undefined} options
   * @param {boolean} inTransaction
   * @returns {Promise<Results>}
   */
  async function run(sql, params, options, inTransaction, retried = false) {
    let statement = statements.get(sql);
    try {
      if (statement) {
        statements.delete(sql); // moved to the most recently used end
        statements.set(sql, statement);
      } else statement = await prepare(sql);
      const types = statement.paramTypes;
      // As PGlite's `query` does: the serializer of the parameter's type, else toString().
      const values = params.map((value, i) => {
        if (value === null || value === undefined) return null;
        const serializer = options?.serializers?.[types[i]] ?? lite.serializers[types[i]];
        return serializer ? serializer(value) : String(value);
      });
      const batch = concat([serialize.bind({ statement: statement.name, values }), serialize.execute({}), serialize.sync()]);
      const { messages } = await lite.execProtocol(batch, { syncToFs: !inTransaction });
      const described = statement.rowDescription ? [statement.rowDescription, ...messages] : messages;
      const [parsers, rest] = parsersOf(options);
      return parse.parseResults(described, parsers, rest)[0];
    } catch (e) {
      const code = /** @type {{ code?: string }} */ (e).code;
      if (statement && STALE.has(code)) {
        statements.delete(sql);
        orphans.push(statement.name);
        // Outside a transaction nothing was aborted: prepare it again. Inside, the transaction fails.
        if (!retried && !inTransaction) return run(sql, params, options, inTransaction, true);
      }
      // PGlite's `query` adds these to its errors too.
      throw Object.assign(/** @type {object} */ (e), { query: sql, params, queryOptions: options });
    }
  }

  /**
   * @param {PGliteTransaction} tx
   */
  const inTransaction = (tx) => ({
    /** @param {string} sql @param {unknown[]} [params] @param {QueryOptions} [options] */
    query: (sql, params = [], options) => {
      if (tx.closed) return Promise.reject(new Error('Transaction is closed'));
      return lite._runExclusiveQuery(() => run(sql, params, options, true));
    },
    /** @param {string} sql @param {QueryOptions} [options] */
    exec: (sql, options) => tx.exec(sql, options),
    rollback: () => tx.rollback(),
    get closed() {
      return tx.closed;
    },
  });

  return {
    /** @param {string} sql @param {unknown[]} [params] @param {QueryOptions} [options] */
    query: (sql, params = [], options) =>
      lite._runExclusiveTransaction(() => lite._runExclusiveQuery(() => run(sql, params, options, false))),
    /** @param {string} sql @param {QueryOptions} [options] */
    exec: (sql, options) => lite.exec(sql, options),
    /** @template T @param {(tx: ReturnType<typeof inTransaction>) => Promise<T>} fn */
    transaction: (fn) => lite.transaction((tx) => fn(inTransaction(tx))),
  };
}
