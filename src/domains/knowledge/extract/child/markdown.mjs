// Markdown and MDX → readable text through micromark/mdast (GFM tables included; MDX's JSX, expressions
// and import/export parsed as such): the text of every block on its own lines, table cells separated by
// tabs; raw HTML, JSX tags and attributes, `{expressions}`, import/export and link definitions dropped.
// Text inside JSX elements stays: it is what the page shows.
import { fromMarkdown } from 'mdast-util-from-markdown';
import { gfmFromMarkdown } from 'mdast-util-gfm';
import { gfm } from 'micromark-extension-gfm';
import { TextBuilder } from './limits.mjs';

/** @typedef {import('mdast').Nodes} Nodes */

const DROPPED = new Set(['html', 'mdxjsEsm', 'mdxFlowExpression', 'mdxTextExpression', 'definition', 'thematicBreak']);
const LEAF_BLOCKS = new Set(['paragraph', 'heading']);

/**
 * @param {string} source
 * @param {{ mdx: boolean }} options
 */
export async function markdownText(source, { mdx }) {
  // MDX's parsers (acorn among them) only for .mdx: loading them took about 50 ms of every .md file's process.
  const tree = mdx ? await mdxTree(source) : fromMarkdown(source, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] });
  const text = new TextBuilder();
  for (const block of tree.children) {
    writeBlock(block, text);
    text.push('\n');
  }
  return text.toString();
}

/** @param {string} source */
async function mdxTree(source) {
  const [{ mdxFromMarkdown }, { mdxjs }] = await Promise.all([import('mdast-util-mdx'), import('micromark-extension-mdxjs')]);
  return fromMarkdown(source, { extensions: [gfm(), mdxjs()], mdastExtensions: [gfmFromMarkdown(), mdxFromMarkdown()] });
}

/**
 * @param {Nodes} node
 * @param {TextBuilder} text
 */
function writeBlock(node, text) {
  if (DROPPED.has(node.type)) return;
  if (node.type === 'table') {
    for (const row of node.children) text.push(row.children.map(inlineText).join('\t') + '\n');
  } else if (LEAF_BLOCKS.has(node.type)) {
    text.push(inlineText(node) + '\n');
  } else if ('children' in node) {
    for (const child of node.children) writeBlock(child, text);
  } else if ('value' in node) {
    text.push(node.value + '\n'); // code blocks
  }
}

/**
 * @param {Nodes} node
 * @returns {string}
 */
function inlineText(node) {
  if (DROPPED.has(node.type)) return '';
  if (node.type === 'break') return '\n';
  if (node.type === 'image' || node.type === 'imageReference') return node.alt ?? '';
  if ('children' in node) return node.children.map(inlineText).join('');
  return 'value' in node ? node.value : '';
}
