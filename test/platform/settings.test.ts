// Every setting the server reads is documented: in the settings table of docs/settings.md and in .env.example.
// A setting is any environment variable the code of `npm start`, `npm run migrate` and `npm run cli`
// reads (all of it under src/): `process.env.X`, `env.X`, `env['X']`, and the names config.ts passes
// to its parsers (`whole('X', …)`, `bool('X', …)`).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { docSection } from '../helpers/docs.js';

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const full = path.join(dir, d.name);
    if (d.isDirectory()) return d.name === 'generated' ? [] : sourceFiles(full);
    return /\.(ts|mts|mjs|js)$/.test(d.name) ? [full] : [];
  });
}

/** Setting name → the files that read it. */
function settingsRead(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const add = (name: string, file: string) => found.set(name, [...new Set([...(found.get(name) ?? []), file])]);
  for (const file of sourceFiles('src')) {
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(/\benv(?:\.([A-Z][A-Z0-9_]+)\b|\[\s*['"`]([A-Z][A-Z0-9_]+)['"`]\s*\])/g)) add(m[1] ?? m[2], file);
    // config.ts names each setting once more when it hands it to a parser: whole('DATABASE_POOL_SIZE', …).
    if (file === path.join('src', 'config.ts')) {
      for (const m of text.matchAll(/\b\w+\(\s*'([A-Z][A-Z0-9_]+)'\s*,/g)) add(m[1], file);
    }
  }
  return found;
}

/** The names in the first column of the tables of docs/settings.md (a cell may name several). */
function settingsTable(): Set<string> {
  const settings = docSection('docs/settings.md', '# Settings');
  expect(settings, 'docs/settings.md has no settings table').toContain('\n| Variable | Default | Meaning |\n');
  const names = new Set<string>();
  for (const line of settings.split('\n')) {
    const first = /^\|([^|]*)\|/.exec(line)?.[1];
    for (const m of first?.matchAll(/`([A-Z][A-Z0-9_]+)`/g) ?? []) names.add(m[1]);
  }
  return names;
}

/** `NAME=value` lines of .env.example, commented out (`# NAME=`) or not. */
function envExample(): Set<string> {
  const text = fs.readFileSync('.env.example', 'utf8');
  return new Set([...text.matchAll(/^#?\s?([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]));
}

describe('settings', () => {
  const read = settingsRead();

  it('finds the settings the code reads', () => {
    // The scan itself must work: these are read today, by config.ts and by the SQL log switch.
    for (const name of ['PORT', 'DATABASE_URL', 'DATABASE_POOL_SIZE', 'MIGRATE_ON_START', 'FUNIL_LOG_SQL'])
      expect([...read.keys()]).toContain(name);
  });

  it('documents every setting in the docs/settings.md table and in .env.example', () => {
    const table = settingsTable();
    const example = envExample();
    const missing = [...read].flatMap(([name, files]) => {
      const where = [!table.has(name) && 'the table of docs/settings.md', !example.has(name) && '.env.example'].filter(Boolean);
      return where.length ? [`${name} (read in ${files.join(', ')}) is missing from ${where.join(' and from ')}`] : [];
    });
    expect(missing, `Settings not documented:\n  ${missing.join('\n  ')}\n`).toEqual([]);
  });

  it('documents no setting twice and none in .env.example that the table lacks', () => {
    const table = settingsTable();
    const extra = [...envExample()].filter((name) => !table.has(name));
    expect(extra, `.env.example names settings the table of docs/settings.md does not: ${extra.join(', ')}`).toEqual([]);
    const lines = fs.readFileSync('.env.example', 'utf8').split('\n');
    const seen = lines.flatMap((l) => /^#?\s?([A-Z][A-Z0-9_]+)=/.exec(l)?.[1] ?? []);
    const twice = seen.filter((name, i) => seen.indexOf(name) !== i);
    expect(twice, `.env.example names these more than once: ${twice.join(', ')}`).toEqual([]);
  });
});
