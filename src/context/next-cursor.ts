// The next cursor of a sync page of a plain-array list (domains/common/sync.ts), kept for the request:
// such a list has no room for it in its answer, so REST sends it as X-Next-Cursor (rest/handler.ts) and
// /graphql as `extensions.next_cursor` (http/graphql-next-cursor.ts). Per-request state, like the
// loaders, so that both transports read it without importing a domain.
import type { Context } from './context.js';
import { perRequest } from './loaders.js';

const nextCursorKey = {};

const nextCursors = (ctx: Context) => perRequest(ctx, nextCursorKey, () => new Map<string, string | null>());

/** Records the next cursor of a plain-array list: the X-Next-Cursor header (REST), `extensions.next_cursor` (GraphQL). */
export function setNextCursor(ctx: Context, list: string, next: string | null): void {
  nextCursors(ctx).set(list, next);
}

/** The next cursor the request's plain-array list recorded (REST runs one field), if any. */
export function nextCursorOf(ctx: Context): string | null {
  for (const next of (ctx.perRequest.get(nextCursorKey) as Map<string, string | null> | undefined)?.values() ?? []) if (next) return next;
  return null;
}

/** Every plain-array list this request synced, with its next cursor (null on its last page). */
export function nextCursorsOf(ctx: Context): Record<string, string | null> | null {
  const found = ctx.perRequest.get(nextCursorKey) as Map<string, string | null> | undefined;
  return found?.size ? Object.fromEntries(found) : null;
}
