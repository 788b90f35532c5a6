// Clients generated from the served OpenAPI document, as an integrator makes them: docs/api.md's two
// command lines (openapi-typescript and @hey-api/openapi-ts) run against a listening server, both outputs
// compile under strict tsc together with a flow that uses them (test/rest-client/generated-clients/flow.ts),
// and the flow runs through the @hey-api client with every answer checked against the document.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, type RunningServer } from '../../src/http/server.js';
import { useTestApp } from '../helpers/app.js';
import { allDocs } from '../helpers/docs.js';
import { OpenApiCheck } from '../helpers/openapi-check.js';

const api = useTestApp();
const FLOW = 'test/rest-client/generated-clients/flow.ts';
/** The address and folder the documented commands name. */
const README_SERVER = 'http://127.0.0.1:4000';
const README_OUTPUT = 'src/funil/';
/** The text the flow uploads. */
const PROPOSAL = 'Proposta comercial: plano anual, 12 x R$ 125.';

let server: RunningServer;
let dir: string;

beforeAll(async () => {
  server = await listen(api.app, { ...api.config, host: '127.0.0.1', port: 0 });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'funil-clients-'));
});

afterAll(async () => {
  await server?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** The `npx` lines of the documentation's REST client section (docs/api.md). */
function documentedCommands(): string[] {
  const docs = allDocs();
  const block = [...docs.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]).find((b) => b.includes('npx openapi-typescript'));
  return (block ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('npx '));
}

/** Runs a command line with bash in the repository; resolves with its output, rejects on a non-zero exit. */
function run(line: string, env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', line], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${line} → exit ${code}\n${out}`))));
  });
}

describe('clients generated from the served document', () => {
  it(
    'openapi-typescript and @hey-api/openapi-ts generate clients that compile (strict), and a flow through one matches the document',
    { timeout: 240_000 },
    async () => {
      const commands = documentedCommands();
      expect(commands.map((c) => c.split(' ')[1])).toEqual(['openapi-typescript', 'openapi-ts']);
      const apiDoc = fs.readFileSync('docs/api.md', 'utf8');
      for (const line of commands) expect(apiDoc).toContain(line);
      // Both read the served document over the socket; npm stays offline (the packages are installed).
      await Promise.all(
        commands.map((line) =>
          run(line.replaceAll(README_SERVER, server.url).replaceAll(README_OUTPUT, `${dir}/`), { npm_config_offline: 'true' }),
        ),
      );
      expect(fs.existsSync(path.join(dir, 'schema.ts'))).toBe(true);
      expect(fs.readFileSync(path.join(dir, 'client', 'client.gen.ts'), 'utf8')).toContain(`baseUrl: '${api.config.publicBaseUrl}'`);

      fs.copyFileSync(FLOW, path.join(dir, 'flow.ts'));
      const tsconfig = {
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2022', 'DOM', 'DOM.Iterable'],
          types: [],
          strict: true,
          noUnusedLocals: true,
          noEmit: true,
        },
        include: ['**/*.ts'],
      };
      fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
      await run(`"${process.execPath}" node_modules/typescript/bin/tsc -p "${dir}/tsconfig.json"`);

      // The flow, through the generated client, against the server over its socket.
      const check = new OpenApiCheck(await (await fetch(`${server.url}/backend/openapi.json`)).json());
      const calls: string[] = [];
      const checkingFetch = async (input: RequestInfo | URL, init?: RequestInit) => {
        const request = new Request(input, init);
        const response = await fetch(request.clone());
        await check.checkResponse(request, response);
        calls.push(
          `${request.method} ${new URL(request.url).pathname.replace(/[0-9a-f-]{36}|\/media\/proxy\/.+/g, (m) => (m.startsWith('/') ? '/media/proxy/…' : ':id'))} ${response.status}`,
        );
        return response;
      };
      const org = await api.newOrg();
      const { runFlow } = await import(pathToFileURL(path.join(dir, 'flow.ts')).href);
      const result = await runFlow({ baseUrl: server.url, key: org.key, fetch: checkingFetch });

      expect(calls).toEqual([
        'POST /backend/pipelines 201',
        'POST /backend/leads 200',
        'POST /backend/pipeline/deals 201',
        'PUT /backend/pipeline/deals/:id/stage 200',
        'POST /backend/uploads 200',
        'GET /media/proxy/… 200',
        'POST /backend/channels 201',
        'POST /backend/messages/send 200',
      ]);
      expect(result).toEqual({
        dealNumber: 1,
        movedTo: result.secondStage,
        secondStage: expect.any(String),
        upload: { filename: 'proposta', size: Buffer.byteLength(PROPOSAL), status: 'PENDING' },
        fileText: PROPOSAL,
        message: { role: 'assistant', status: 'pending', content: 'Olá, Ana! Segue a proposta.', sameLead: true },
      });
    },
  );
});
