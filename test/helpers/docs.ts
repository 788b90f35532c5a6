// The documentation the tests check: README.md and docs/*.md, read from the repository's root.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A documentation file's text, by its path from the repository's root (`README.md`, `docs/api.md`). */
export function readDoc(file: string): string {
  return fs.readFileSync(path.join(ROOT, file), 'utf8');
}

/** README.md, then every docs/*.md in name order, as one text: for a block that may live in any of them. */
export function allDocs(): string {
  const docs = fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs].map(readDoc).join('\n');
}

/**
 * The section of `file` that starts at the heading line `heading` (e.g. `## Quickstart`), up to the next
 * heading of the same or a higher level; lines inside fenced code blocks (`# keep:` comments) are not
 * headings. Throws when the file has no such heading.
 */
export function docSection(file: string, heading: string): string {
  const level = /^#+/.exec(heading)![0].length;
  const lines = readDoc(file).split('\n');
  let inCode = false;
  let start = -1;
  let end = lines.length;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trimStart().startsWith('```')) inCode = !inCode;
    if (inCode) continue;
    const match = /^(#+) /.exec(lines[i]);
    if (!match) continue;
    if (start === -1) {
      if (lines[i] === heading) start = i;
    } else if (match[1].length <= level) {
      end = i;
      break;
    }
  }
  if (start === -1) throw new Error(`${file} has no heading "${heading}"`);
  return lines.slice(start, end).join('\n');
}
