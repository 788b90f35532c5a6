// Sync pages of the lists answered as plain arrays (tags, products, knowledge items, templates) have no
// room for their next cursor: REST sends it as X-Next-Cursor, /graphql as `extensions.next_cursor`,
// keyed by list (`{"tags": "…"}`; null on a list's last page), as recorded in context/next-cursor.ts.
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context/context.js';
import { nextCursorsOf } from '../context/next-cursor.js';

export function nextCursorPlugin(): Plugin {
  return {
    onExecute() {
      return {
        onExecuteDone({ args, result, setResult }) {
          if (Symbol.asyncIterator in result) return;
          const next = nextCursorsOf(args.contextValue as unknown as Context);
          if (next) setResult({ ...result, extensions: { ...result.extensions, next_cursor: next } });
        },
      };
    },
  };
}
