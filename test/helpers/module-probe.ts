// `node --import tsx test/helpers/module-probe.ts`: loads what `npm start` loads before serving (the
// tracing preload, the application's modules, prom-client when METRICS_TOKEN is set) and prints, as JSON, every module path whose name
// contains @opentelemetry: ES modules as the loader resolves them, CommonJS ones from require's cache.
import { createRequire, register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';

const resolved: string[] = [];
const { port1, port2 } = new MessageChannel();
port1.on('message', (url: string) => resolved.push(url));
const hook = `let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) { const r = await next(specifier, context); port.postMessage(r.url); return r; }`;
register(`data:text/javascript,${encodeURIComponent(hook)}`, import.meta.url, { data: { port: port2 }, transferList: [port2] });

await import('../../src/observability/preload.js');
await import('../../src/app.js');
await import('../../src/http/server.js');
await import('../../src/workers.js');
// What createApp does when METRICS_TOKEN is set.
if (process.env.METRICS_TOKEN) (await import('../../src/observability/metrics.js')).enableMetrics();
await new Promise((r) => setTimeout(r, 100)); // the hook's last messages
const cached = Object.keys(createRequire(import.meta.url).cache);
console.log(JSON.stringify([...resolved, ...cached].filter((p) => p.includes('@opentelemetry'))));
process.exit(0);
