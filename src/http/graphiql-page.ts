// GraphiQL's page, from the server's own package (no CDN), with one addition. GraphiQL fetches the
// schema when the page opens (without a key: a 401, "Error fetching schema") and then only when asked
// to; here, an edit of the headers that sets another `Authorization: Bearer …` value fetches it again,
// so the docs pane and completion work as soon as a key is pasted.
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import type { GraphiQLOptions } from 'graphql-yoga';

const RENDER_CALL = 'YogaGraphiQL.renderYogaGraphiQL(';

// Runs in the page. Debounced, and only for a value that looks like a whole key: typing one character
// at a time must not spend the failed-authentication budget. GraphiQL's "Re-fetch GraphQL schema"
// shortcut (Shift-Ctrl-R, a listener on window) reads the headers editor as it is now.
const REFETCH_ON_KEY = `
const funilRenderGraphiQL = (root, options) => {
  let tried = null;
  let timer;
  const authorizationOf = (text) => {
    try {
      const headers = JSON.parse(text);
      const name = Object.keys(headers ?? {}).find((h) => h.toLowerCase() === 'authorization');
      return name ? headers[name] : null;
    } catch {
      return null;
    }
  };
  const onEditHeaders = (text) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      const value = authorizationOf(text);
      if (typeof value !== 'string' || !/^Bearer\\s+\\S{16,256}\\s*$/i.test(value) || value === tried) return;
      tried = value;
      window.dispatchEvent(new KeyboardEvent('keydown', { key: 'R', ctrlKey: true, shiftKey: true }));
    }, 300);
  };
  return YogaGraphiQL.renderYogaGraphiQL(root, { ...options, onEditHeaders });
};
`;

/** Yoga's GraphiQL page whose render call also refetches the schema when a key is set. */
export function graphiqlPage(options?: GraphiQLOptions): string {
  const page = renderGraphiQL(options);
  const at = page.lastIndexOf(RENDER_CALL);
  // A newer render-graphiql that renders differently must fail loudly, not lose the refetch quietly.
  if (at < 0 || page.indexOf(RENDER_CALL) !== at) throw new Error('GraphiQL page: the render call was not found once');
  return `${page.slice(0, at)}${REFETCH_ON_KEY}funilRenderGraphiQL(${page.slice(at + RENDER_CALL.length)}`;
}
