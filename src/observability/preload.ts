// `node --import ./src/observability/preload.ts` (npm start): starts OpenTelemetry before the application
// loads, when OTEL_EXPORTER_OTLP_ENDPOINT is set. Otherwise it loads nothing of it.
import { register } from 'node:module';
import { loadConfig } from '../config.js';

let endpoint: string | undefined;
try {
  endpoint = loadConfig().otlpEndpoint;
} catch {
  // An invalid configuration: src/main.ts says why and exits.
}
if (endpoint) {
  // ES modules (how the application imports `pg`) are instrumented through this loader hook.
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  await import('./otel.js');
}
