// The Funil server of the fairness line's extraction half (bench/fairness.ts), in a process of its own as
// in production: the bench's in-process server shares its heap and event loop with the harness, B's own
// client, the raw-SQL server, PostGraphile and what earlier lines left, and in a full run its garbage
// collections and stalls were those of all of them. The bench's server settings (bench/server-config.ts),
// on the bench's schema; LOG_LEVEL as the bench set it. argv[2]: JSON { databaseUrl, storageDir }. Prints its URL once it listens.
// `GET /bench/loop?action=start|read`: its main thread's event-loop delay and busy share since `start`.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { createApp } from '../src/app.js';
import { openDatabase } from '../src/db/client.js';
import { listen } from '../src/http/server.js';
import { benchServerConfig } from './server-config.js';

const { databaseUrl, storageDir } = JSON.parse(process.argv[2]) as { databaseUrl: string; storageDir: string };
const db = await openDatabase({ databaseUrl, poolSize: 10 });
const config = benchServerConfig(databaseUrl, storageDir);
const app = createApp(config, db);

const loop = monitorEventLoopDelay({ resolution: 1 });
let since = performance.eventLoopUtilization();
function loopStats(action: string | null): Response {
  if (action === 'start') {
    loop.reset();
    loop.enable();
    since = performance.eventLoopUtilization();
    return Response.json({ started: true });
  }
  return Response.json({
    p99: loop.percentile(99) / 1e6,
    max: loop.max / 1e6,
    busy: performance.eventLoopUtilization(since).utilization,
  });
}

const server = await listen(
  {
    styleOf: app.styleOf,
    fetch: async (request, client) => {
      const url = new URL(request.url);
      if (url.pathname === '/bench/loop') return loopStats(url.searchParams.get('action'));
      return app.fetch(request, client);
    },
  },
  config,
);
process.stdout.write(`${server.url}\n`);
// Stopped by the line with SIGTERM: exit through Node, so that a --cpu-prof profile is written.
process.once('SIGTERM', () => process.exit(0));
