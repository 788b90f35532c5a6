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

/** How long a stop waits for the collector: an unreachable one must not hold the exit. */
const FLUSH_TIMEOUT_MS = 2_000;

/**
 * At shutdown: flushes the buffered spans, for at most FLUSH_TIMEOUT_MS (nothing to do when tracing is
 * off). A collector that is gone loses the spans, not the exit code: its failure is returned, not thrown.
 */
export async function stopTracing(): Promise<Error | undefined> {
  if (!tracer) return undefined;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Error>((resolve) => {
    timer = setTimeout(() => resolve(new Error(`the trace collector did not answer within ${FLUSH_TIMEOUT_MS} ms`)), FLUSH_TIMEOUT_MS);
  });
  const flushed = tracer.shutdown().then(
    () => undefined,
    (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
  );
  try {
    return await Promise.race([flushed, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
