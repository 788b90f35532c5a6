// The request a piece of code runs for, without passing it down: its id, read by every log line
// (src/log.ts) written while the request is handled, including from services and Prisma callbacks.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

/** An `X-Request-Id` a client may choose; anything else is replaced by a generated one. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const storage = new AsyncLocalStorage<{ requestId: string }>();

/** The client's `X-Request-Id` when it is acceptable, else a fresh one. */
export function requestIdFrom(header: string | null): string {
  return header !== null && CLIENT_REQUEST_ID.test(header) ? header : randomUUID();
}

export function runWithRequestId<T>(requestId: string, fn: () => T): T {
  return storage.run({ requestId }, fn);
}

export const currentRequestId = (): string | undefined => storage.getStore()?.requestId;
