// OpenTelemetry, loaded only when OTEL_EXPORTER_OTLP_ENDPOINT is set (by ./preload.ts, before the
// application's modules, so that `pg` and `http` are instrumented when they load). Spans go over OTLP/HTTP
// (JSON) to `$OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces`; the exporter reads the standard OTEL_* variables.
// HTTP server and client spans, and pg statements (PostgreSQL), come from the instrumentations;
// GraphQL executions, SQL through the embedded database and job runs come from `traced` (./tracing.ts).
import { context, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { installTracer } from './tracing.js';

const PROBES = new Set(['/health', '/ready', '/metrics']);

// Traces only: metrics are Prometheus' (/metrics) and logs go to stdout, unless the operator asks otherwise.
process.env.OTEL_METRICS_EXPORTER ??= 'none';
process.env.OTEL_LOGS_EXPORTER ??= 'none';

const sdk = new NodeSDK({
  serviceName: process.env.OTEL_SERVICE_NAME || 'funil',
  traceExporter: new OTLPTraceExporter(),
  instrumentations: [
    // Load balancers' probes and Prometheus' scrapes would be most of the traces.
    new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => PROBES.has((req.url ?? '').split('?')[0]) }),
    new PgInstrumentation({ requireParentSpan: true }),
  ],
});
sdk.start();

const tracer = trace.getTracer('funil');

installTracer({
  span(name, attributes, fn, options) {
    return tracer.startActiveSpan(name, { attributes: attributes as Attributes, root: options?.root }, async (span) => {
      try {
        return await fn();
      } catch (e) {
        span.recordException(e as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (e as Error)?.message });
        throw e;
      } finally {
        span.end();
      }
    });
  },
  traceId: () => trace.getSpan(context.active())?.spanContext().traceId,
  shutdown: () => sdk.shutdown(),
});
