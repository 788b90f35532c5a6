// The tracing seam: what the code calls to trace a piece of work, without importing OpenTelemetry. When
// OTEL_EXPORTER_OTLP_ENDPOINT is set, ./preload.ts loads ./otel.ts, which installs the real tracer here;
// otherwise `traced` runs the function as it is and no OpenTelemetry module is ever loaded.
export type SpanAttributes = Record<string, string | number | boolean | undefined>;

export interface Tracer {
  /** Runs `fn` inside a new span (a child of the active one, unless `root`), ended when its promise settles. */
  span<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>, options?: { root?: boolean }): Promise<T>;
  /** The trace id of the active span, if any. */
  traceId(): string | undefined;
  /** Sends the spans still buffered. */
  shutdown(): Promise<void>;
}

let tracer: Tracer | undefined;

export function installTracer(t: Tracer): void {
  tracer = t;
}

export const tracingEnabled = (): boolean => tracer !== undefined;

export function traced<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>, options?: { root?: boolean }): Promise<T> {
  return tracer ? tracer.span(name, attributes, fn, options) : fn();
}

export const activeTraceId = (): string | undefined => tracer?.traceId();

/** At shutdown: flushes the buffered spans (nothing to do when tracing is off). */
export async function stopTracing(): Promise<void> {
  await tracer?.shutdown();
}
