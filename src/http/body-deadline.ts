// A request body must arrive whole within REQUEST_BODY_TIMEOUT_MS of its headers: a client that trickles
// or stalls its body gets 408 in the route's error style, instead of holding a connection and a handler
// for Node's default of five minutes. A client that goes away in the middle of its body is a client
// error (400, which it will not read), never an internal error with a stack in the log.
import { AppError } from '../errors.js';

const timedOut = () => new AppError('REQUEST_TIMEOUT', 'O corpo da requisição não chegou a tempo');
const aborted = () => new AppError('INVALID_INPUT', 'O cliente interrompeu o envio do corpo da requisição');

/** Runs `handle` on `request` with its body under the deadline. */
export async function fetchWithBodyDeadline(
  request: Request,
  timeoutMs: number,
  handle: (request: Request) => Promise<Response>,
): Promise<Response> {
  const source = request.body;
  if (!source) return handle(request);
  const reader = source.getReader();
  let expired = false;
  let timer: NodeJS.Timeout | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      timer = setTimeout(() => {
        expired = true;
        controller.error(timedOut());
        reader.cancel().catch(() => {});
      }, timeoutMs);
    },
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (expired) return;
        if (done) {
          clearTimeout(timer);
          controller.close();
        } else controller.enqueue(value);
      } catch {
        clearTimeout(timer);
        if (!expired) controller.error(aborted());
      }
    },
    cancel(reason) {
      clearTimeout(timer);
      return reader.cancel(reason);
    },
  });
  // The request's own class (the server adapter's, lighter than the global one).
  const RequestClass = request.constructor as typeof Request;
  const guarded = new RequestClass(request.url, {
    method: request.method,
    headers: request.headers,
    body,
    duplex: 'half',
    signal: request.signal,
  } as RequestInit);
  try {
    const response = await handle(guarded);
    // The rest of a late body is never read: close the connection instead of waiting for it.
    if (expired) response.headers.set('connection', 'close');
    return response;
  } finally {
    // A body the handler did not read is no longer timed.
    clearTimeout(timer);
  }
}
