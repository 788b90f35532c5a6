// The typed clients of docs/api.md compile as written in a front end that resolves modules the way Node
// does (`"module": "NodeNext"`, an ESM package): beside copies of schema.graphql and openapi.json, its
// codegen.ts generates the GraphQL client, its openapi-typescript command the REST types, and tsc
// checks its TypeScript blocks that name their file against them (the @hey-api client's
// generation and use are test/platform/openapi-clients.test.ts's).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { docSection } from '../helpers/docs.js';

const ROOT = process.cwd();
const BIN = path.join(ROOT, 'node_modules', '.bin');

/** docs/api.md's section on typed clients: its ```ts blocks (named by their first `// file` comment) and ```sh lines. */
function clientSection(section: string) {
  const blocks = (lang: string) =>
    [...section.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1].replace(/^ {2}/gm, ''));
  const files = blocks('ts').flatMap((code) => {
    const name = /^\/\/ (\S+\.ts)\b/.exec(code);
    return name ? [{ file: name[1], code }] : [];
  });
  return { files, commands: blocks('sh').flatMap((b) => b.split('\n').filter((l) => l.startsWith('npx '))) };
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'funil-readme-client-'));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

function run(command: string, cwd: string) {
  const r = spawnSync('bash', ['-c', command], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, PATH: `${BIN}:${process.env.PATH}` },
    timeout: 120_000,
  });
  expect(r.status, `${command}\n${r.stdout}\n${r.stderr}`).toBe(0);
  return r.stdout;
}

describe("docs/api.md: a front end's typed client", () => {
  it('the GraphQL (client preset) and REST (openapi-typescript + openapi-fetch) examples compile under NodeNext', () => {
    const { files, commands } = clientSection(docSection('docs/api.md', "### A front end's typed client"));
    expect(files.map((f) => f.file)).toEqual(['codegen.ts', 'src/board.ts', 'src/funil.ts']);
    // The layout the documented paths assume: the front end beside a checkout of funil.
    const funil = path.join(work, 'funil');
    const front = path.join(work, 'front');
    fs.mkdirSync(funil);
    fs.mkdirSync(path.join(front, 'src'), { recursive: true });
    for (const f of ['schema.graphql', 'openapi.json']) fs.copyFileSync(f, path.join(funil, f));
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(front, 'node_modules'));
    fs.writeFileSync(path.join(front, 'package.json'), JSON.stringify({ name: 'front', private: true, type: 'module' }));
    // A browser front end: DOM types, no Node types.
    const compilerOptions = {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['ES2022', 'DOM'],
      types: [],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
    };
    fs.writeFileSync(path.join(front, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['src'] }));
    // `key` and `id` are the reader's own values.
    const given: Record<string, string> = { 'src/funil.ts': 'declare const key: string;\ndeclare const id: string;\n' };
    for (const { file, code } of files) fs.writeFileSync(path.join(front, file), (given[file] ?? '') + code);
    // Proof that the project resolves like NodeNext: an import without its extension is an error there.
    fs.writeFileSync(
      path.join(front, 'src', 'probe.ts'),
      "// @ts-expect-error: NodeNext wants './funil/schema.js'\nexport type { paths } from './funil/schema';\n",
    );

    // The documented openapi-typescript command, the served document read from the copy.
    const types = commands.find((c) => c.startsWith('npx openapi-typescript '));
    expect(types).toBe('npx openapi-typescript http://127.0.0.1:4000/backend/openapi.json -o src/funil/schema.ts');
    run(types!.replace('http://127.0.0.1:4000/backend/openapi.json', '../funil/openapi.json'), front);
    const codegen = /^\/\/ codegen\.ts .*\((npx [^)]+)\)/m.exec(files[0].code);
    expect(codegen, 'codegen.ts block names its command').not.toBeNull();
    run(codegen![1], front);
    expect(fs.readFileSync(path.join(front, 'src', 'gql', 'index.ts'), 'utf8')).toContain('.js"');

    run('tsc -p tsconfig.json', front);
  }, 180_000);
});
