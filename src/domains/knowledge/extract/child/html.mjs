// HTML → the text a reader sees, through htmlparser2's streaming parser (entities decoded, implied tags
// closed): nothing from head, script, style, template, noscript or hidden elements; a line break around
// every block and a blank line around paragraphs, headings, lists and tables; table cells separated by
// tabs, like spreadsheet rows; whitespace collapsed outside <pre>.
import { Parser } from 'htmlparser2';
import { TextBuilder } from './limits.mjs';

const INVISIBLE = new Set(['head', 'title', 'script', 'style', 'template', 'noscript', 'iframe', 'object']);
const PARAGRAPHS = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'dl', 'table', 'pre', 'blockquote', 'figure', 'hr']);
const LINES = new Set([
  'address',
  'article',
  'aside',
  'body',
  'br',
  'caption',
  'dd',
  'details',
  'dialog',
  'div',
  'dt',
  'fieldset',
  'figcaption',
  'footer',
  'form',
  'header',
  'hgroup',
  'html',
  'legend',
  'li',
  'main',
  'nav',
  'option',
  'section',
  'summary',
  'tr',
]);
const CELLS = new Set(['td', 'th']);

/** @param {Record<string, string>} attributes */
const isHidden = (attributes) => 'hidden' in attributes || /display\s*:\s*none/i.test(attributes.style ?? '');

/** @param {string} html */
export function htmlText(html) {
  const text = new TextBuilder();
  let invisibleDepth = 0; // open elements whose content is not shown
  let preDepth = 0;
  let firstCellOfRow = true;
  let pendingBreaks = 0; // line breaks owed before the next text: 1 after a block, 2 after a paragraph

  /** @param {string} name */
  const breakAt = (name) => {
    if (PARAGRAPHS.has(name)) pendingBreaks = 2;
    else if (LINES.has(name)) pendingBreaks = Math.max(pendingBreaks, 1);
  };

  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (invisibleDepth > 0 || INVISIBLE.has(name) || isHidden(attributes)) {
          invisibleDepth++;
          return;
        }
        if (name === 'pre') preDepth++;
        if (name === 'tr') firstCellOfRow = true;
        if (CELLS.has(name)) {
          if (!firstCellOfRow) {
            pendingBreaks = 0;
            text.push('\t');
          }
          firstCellOfRow = false;
        }
        breakAt(name);
      },
      ontext(data) {
        if (invisibleDepth > 0) return;
        const shown = preDepth > 0 ? data : data.replace(/\s+/g, ' ');
        if (pendingBreaks > 0) {
          if (shown.trim() === '') return; // the whitespace between blocks
          text.push('\n'.repeat(pendingBreaks));
          pendingBreaks = 0;
        }
        text.push(shown);
      },
      // htmlparser2 reports a close for every open, implied ones and void elements included.
      onclosetag(name) {
        if (invisibleDepth > 0) {
          invisibleDepth--;
          return;
        }
        if (name === 'pre') preDepth--;
        breakAt(name);
      },
    },
    { decodeEntities: true },
  );
  parser.end(html);
  return text.toString();
}
