// `npm start`: validate the environment, open (and migrate) the database, run the domains' start hooks
// (./start-hooks.ts: the first start creates an organisation), serve, and shut down cleanly on
// SIGTERM/SIGINT.
import net from 'node:net';
import path from 'node:path';
import { createApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './db/client.js';
import { MigrationsPendingError } from './db/migrate.js';
import { DataDirInUseError } from './db/pglite-lock.js';
import { closeLiveHub, endLiveStreams } from './events/live.js';
import { listen } from './http/server.js';
import { log, setLogLevel, errorText } from './log.js';
import { stopTracing } from './observability/tracing.js';
import { runStartHooks } from './start-hooks.js';
import { startJobRunner } from './workers.js';

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      process.exit(1);
    }
    throw e;
  }
  setLogLevel(config.logLevel);
  // The port first: a start that cannot listen must not create a database, nor an organisation and its key.
  const held = await holdPort(config.host, config.port);
  // The first start on a new data directory spends several seconds creating the schema.
  const where = config.databaseUrl ? 'PostgreSQL' : `embedded PGlite in ${config.dataDir}`;
  console.log(`Opening the database (${where})${config.migrateOnStart ? ' and applying pending migrations' : ''}…`);
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    pgliteDir: path.join(config.dataDir, 'db'),
    pgliteWorker: config.pgliteWorker,
    poolSize: config.databasePoolSize,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    migrate: config.migrateOnStart,
  });
  const app = createApp(config, db);
  await runStartHooks({ db, config, storage: app.deps.storage });
  await new Promise((resolve) => held.close(resolve));
  const server = await listen(app, config);
  const jobs = await startJobRunner(db, config);
  console.log(
    [
      `Funil is listening on ${server.url} (${db.kind === 'pglite' ? `embedded PGlite in ${config.dataDir}` : 'PostgreSQL'})`,
      `  GraphQL + GraphiQL  ${server.url}/graphql`,
      `  REST API            ${server.url}/backend`,
      `  OpenAPI document    ${server.url}/backend/openapi.json`,
      `  REST reference      ${server.url}/backend/docs`,
      `  Health              ${server.url}/health, ${server.url}/ready`,
    ].join('\n'),
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const { shutdownDelayMs: delayMs, shutdownTimeoutMs: timeoutMs } = config;
    log.info('shutting down', { signal, delayMs, timeoutMs });
    const force = setTimeout(() => {
      log.error('shutdown timed out: exiting with requests or jobs unfinished', { timeoutMs });
      process.exit(1);
    }, timeoutMs).unref();
    // HTTP and the workers drain side by side; the workers abort what is left a second before the deadline
    // (their jobs run again elsewhere when the lease expires), so closing the database fits in. Open
    // subscription streams (SSE) end when the listener closes: their clients, which would never hang up,
    // reconnect to another process instead of holding the drain until the deadline.
    const streamsEnd = new Promise((resolve) => setTimeout(resolve, delayMs)).then(() => endLiveStreams(config));
    await Promise.all([server.close({ delayMs }), streamsEnd, jobs.stop({ timeoutMs: Math.max(timeoutMs - 1_000, 0) })]);
    closeLiveHub(config);
    await db.close();
    const unsent = await stopTracing(); // the spans still buffered
    if (unsent) log.warn('spans not sent at shutdown', { error: unsent.message });
    clearTimeout(force);
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

class PortInUseError extends Error {}

/** Listens on the address with a bare server (no answers) until the real one takes it over; PortInUseError when it cannot. */
function holdPort(host: string, port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer((socket) => socket.destroy());
    probe.once('error', (e: NodeJS.ErrnoException) =>
      reject(
        e.code === 'EADDRINUSE' || e.code === 'EACCES'
          ? new PortInUseError(`Cannot listen on ${host}:${port} (${e.code}): nothing was created. Stop what holds the port, or set PORT.`)
          : e,
      ),
    );
    probe.listen(port, host, () => resolve(probe));
  });
}

main().catch((e) => {
  if (e instanceof DataDirInUseError || e instanceof MigrationsPendingError || e instanceof PortInUseError) console.error(e.message);
  else log.error('failed to start', { error: errorText(e) });
  process.exit(1);
});
