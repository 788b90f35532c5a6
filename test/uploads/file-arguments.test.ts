// Files sent as typed `File` arguments — the GraphQL multipart request on /graphql and multipart bodies of
// REST field routes — over the real HTTP server: spooled to temporary files as they arrive, stored byte
// for byte, refused at the body limit (413) and on any departure from the multipart specification (400),
// under the body deadline (408), with the server's memory growing by less than a file; and nothing left
// in UPLOAD_TEMP_DIR after a success, a refusal or a client that walks away.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, type RunningServer } from '../../src/http/server.js';
import type { Org } from '../helpers/app.js';
import { testStorageKind } from '../helpers/storage.js';
import {
  filesUnder,
  pathOfKey,
  patternBytes,
  sameBytes,
  startMeasuredApp,
  storedFiles,
  streamedForm,
  uploadForm,
  useUploadApp,
} from './helpers.js';

const TEN_MB = 10 * 1024 * 1024;
const { api, root, tempDir, store } = useUploadApp();
let server: RunningServer;
let org: Org;
const stops: (() => Promise<void>)[] = [];
beforeAll(async () => {
  server = await listen(api.app, { ...api.config, host: '127.0.0.1', port: 0 });
  org = await api.newOrg('Arquivos');
});
afterAll(async () => {
  for (const stop of stops) await stop();
  await server?.close();
  for (const dir of [root, tempDir]) fs.rmSync(dir, { recursive: true, force: true });
});

const UPLOAD = 'mutation($file: File!) { uploadFile(file: $file) { id size file_url } }';
const UPLOAD_TWO = 'mutation($a: File!, $b: File!) { a: uploadFile(file: $a) { size file_url } b: uploadFile(file: $b) { size file_url } }';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
/** The stored bytes behind a file_url (of any PUBLIC_BASE_URL). */
const storedBytes = async (fileUrl: string) => (await store.read(/\/media\/proxy\/([0-9a-f]{48})$/.exec(fileUrl)![1]))!;
const storedBytesIn = (storageRoot: string, fileUrl: string) =>
  fs.readFileSync(pathOfKey(storageRoot, /\/media\/proxy\/([0-9a-f]{48})$/.exec(fileUrl)![1]));

/** What is left in the app's UPLOAD_TEMP_DIR (files and spool directories). */
const leftInTemp = (dir = tempDir) => (fs.existsSync(dir) ? fs.readdirSync(dir) : []);

/** A GraphQL multipart request body: `operations`, `map`, then the files, in this order. */
function graphqlForm(operations: unknown, map: unknown, files: [string, Uint8Array<ArrayBuffer>, string][] = []): FormData {
  const form = new FormData();
  form.append('operations', typeof operations === 'string' ? operations : JSON.stringify(operations));
  form.append('map', typeof map === 'string' ? map : JSON.stringify(map));
  for (const [field, bytes, name] of files) form.append(field, new Blob([bytes]), name);
  return form;
}

/** A multipart body written by hand, for what FormData cannot send (order, names, garbage). */
function rawForm(parts: { name: string; filename?: string; value: string }[], boundary = 'b0undary') {
  const body = parts
    .map(
      (p) =>
        `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename === undefined ? '' : `; filename="${p.filename}"`}\r\n\r\n${p.value}\r\n`,
    )
    .join('');
  return { body: `${body}--${boundary}--\r\n`, contentType: `multipart/form-data; boundary=${boundary}` };
}

const post = (path: string, body: BodyInit, headers: Record<string, string> = {}, init: RequestInit = {}, base = server.url) =>
  fetch(`${base}${path}`, { method: 'POST', body, headers: { authorization: `Bearer ${org.key}`, ...headers }, ...init });

/** Checks that `fn` left no stored file, no upload record and nothing in the temporary directory. */
async function leavesNothing(fn: () => Promise<unknown>) {
  const files = await store.contents();
  const records = await api.db.prisma.upload.count();
  await fn();
  expect(await store.contents()).toEqual(files);
  expect(await api.db.prisma.upload.count()).toBe(records);
  expect(leftInTemp()).toEqual([]);
}

describe('files on /graphql (GraphQL multipart request)', () => {
  it('stores a file of exactly 10 MB byte for byte and removes its temporary file', async () => {
    const exact = patternBytes(TEN_MB, 11);
    const res = await post(
      '/graphql',
      graphqlForm({ query: UPLOAD, variables: { file: null } }, { 0: ['variables.file'] }, [['0', exact, 'exato.bin']]),
    );
    expect(res.status).toBe(200);
    const { data, errors } = await res.json();
    expect(errors).toBeUndefined();
    expect(data.uploadFile.size).toBe(TEN_MB);
    expect(sha256(await storedBytes(data.uploadFile.file_url))).toBe(sha256(exact));
    expect(leftInTemp()).toEqual([]);
  });

  it('puts one file at every path the map gives, and several files each at its own', async () => {
    const a = patternBytes(300_000, 1);
    const b = patternBytes(200_000, 2);
    const twice = await post(
      '/graphql',
      graphqlForm({ query: UPLOAD_TWO, variables: { a: null, b: null } }, { 0: ['variables.a', 'variables.b'] }, [['0', a, 'a.bin']]),
    );
    const one = await twice.json();
    expect(one.errors).toBeUndefined();
    for (const upload of [one.data.a, one.data.b]) expect(sameBytes(await storedBytes(upload.file_url), a)).toBe(true);
    const two = await (
      await post(
        '/graphql',
        graphqlForm({ query: UPLOAD_TWO, variables: { a: null, b: null } }, { x: ['variables.a'], y: ['variables.b'] }, [
          ['x', a, 'a.bin'],
          ['y', b, 'b.bin'],
        ]),
      )
    ).json();
    expect(two.errors).toBeUndefined();
    expect(sameBytes(await storedBytes(two.data.a.file_url), a)).toBe(true);
    expect(sameBytes(await storedBytes(two.data.b.file_url), b)).toBe(true);
    expect(leftInTemp()).toEqual([]);
  });

  it('refuses 10 MB + 1 byte with PAYLOAD_TOO_LARGE, leaving nothing behind', async () => {
    await leavesNothing(async () => {
      const form = graphqlForm({ query: UPLOAD, variables: { file: null } }, { 0: ['variables.file'] }, [
        ['0', patternBytes(TEN_MB + 1, 12), 'grande.bin'],
      ]);
      const { errors } = await (await post('/graphql', form)).json();
      expect(errors[0].extensions).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
    });
  });

  it('answers 413 to a streamed 50 MB body before the client has sent it, leaving nothing behind', async () => {
    await leavesNothing(async () => {
      const total = 50 * 1024 * 1024;
      const { body, state, contentType } = streamedForm(total, {
        fields: [
          ['operations', JSON.stringify({ query: UPLOAD, variables: { file: null } })],
          ['map', JSON.stringify({ 0: ['variables.file'] })],
        ],
        fileField: '0',
      });
      const res = await post('/graphql', body, { 'content-type': contentType }, { duplex: 'half' } as RequestInit);
      const sentWhenAnswered = state.sent;
      expect(res.status).toBe(413);
      expect(await res.json()).toEqual({
        errors: [{ message: expect.any(String), extensions: { code: 'PAYLOAD_TOO_LARGE', status: 413 } }],
      });
      expect(state.finished).toBe(false);
      expect(sentWhenAnswered).toBeLessThan(total / 2);
    });
  });

  it('refuses what departs from the specification with 400 INVALID_INPUT, leaving nothing behind', async () => {
    const operations = JSON.stringify({ query: UPLOAD, variables: { file: null } });
    const withFolder = JSON.stringify({ query: UPLOAD, variables: { file: null, folder: 'x', list: [null] } });
    const map = JSON.stringify({ 0: ['variables.file'] });
    const file = { name: '0', filename: 'a.bin', value: 'conteúdo' };
    const cases: Record<string, { body: string; contentType: string }> = {
      'map not JSON': rawForm([{ name: 'operations', value: operations }, { name: 'map', value: '{"0": [' }, file]),
      'map not an object': rawForm([{ name: 'operations', value: operations }, { name: 'map', value: '[["variables.file"]]' }, file]),
      'map entry not a list': rawForm([{ name: 'operations', value: operations }, { name: 'map', value: '{"0": "variables.file"}' }, file]),
      'map path outside the variables': rawForm([
        { name: 'operations', value: operations },
        { name: 'map', value: '{"0": ["query"]}' },
        file,
      ]),
      'map path to no variable': rawForm([
        { name: 'operations', value: operations },
        { name: 'map', value: '{"0": ["variables.nope"]}' },
        file,
      ]),
      'map path to a value that is not null': rawForm([
        { name: 'operations', value: withFolder },
        { name: 'map', value: '{"0": ["variables.folder"]}' },
        file,
      ]),
      'map path past the end of a list': rawForm([
        { name: 'operations', value: withFolder },
        { name: 'map', value: '{"0": ["variables.list.1"]}' },
        file,
      ]),
      'map path into the prototype': rawForm([
        { name: 'operations', value: operations },
        { name: 'map', value: '{"0": ["variables.__proto__.file"]}' },
        file,
      ]),
      'one path twice': rawForm([
        { name: 'operations', value: operations },
        { name: 'map', value: '{"0": ["variables.file"], "1": ["variables.file"]}' },
        file,
        { ...file, name: '1' },
      ]),
      'more files than mapped': rawForm([
        { name: 'operations', value: operations },
        { name: 'map', value: map },
        file,
        { ...file, name: '1' },
      ]),
      'a mapped file missing': rawForm([
        { name: 'operations', value: operations },
        { name: 'map', value: map },
      ]),
      'the same file twice': rawForm([{ name: 'operations', value: operations }, { name: 'map', value: map }, file, file]),
      'a file before the map': rawForm([{ name: 'operations', value: operations }, file, { name: 'map', value: map }]),
      'map before operations': rawForm([{ name: 'map', value: map }, { name: 'operations', value: operations }, file]),
      'no map': rawForm([{ name: 'operations', value: operations }, file]),
      'another text field': rawForm([
        { name: 'operations', value: operations },
        { name: 'map', value: map },
        { name: 'extra', value: 'x' },
        file,
      ]),
      'a batch of operations': rawForm([
        { name: 'operations', value: JSON.stringify([{ query: UPLOAD, variables: { file: null } }]) },
        { name: 'map', value: '{"0": ["0.variables.file"]}' },
        file,
      ]),
      'a NUL in a file name': rawForm([
        { name: 'operations', value: operations },
        { name: 'map', value: map },
        { ...file, filename: 'a\u0000.bin' },
      ]),
      'a body that is not a form': { body: 'nada de multipart aqui', contentType: 'multipart/form-data; boundary=b0undary' },
      'a form cut before its end': {
        body: rawForm([{ name: 'operations', value: operations }, { name: 'map', value: map }, file]).body.slice(0, -20),
        contentType: 'multipart/form-data; boundary=b0undary',
      },
      'no boundary': { body: 'x', contentType: 'multipart/form-data' },
    };
    await leavesNothing(async () => {
      for (const [name, { body, contentType }] of Object.entries(cases)) {
        const res = await post('/graphql', body, { 'content-type': contentType });
        expect(res.status, name).toBe(400);
        // Errors about one form field (map, operations) also name it in `details`.
        const answer = await res.json();
        expect(answer, name).toEqual({
          errors: [{ message: expect.any(String), extensions: expect.objectContaining({ code: 'INVALID_INPUT', status: 400 }) }],
        });
        expect(
          Object.keys(answer.errors[0].extensions).filter((k) => !['code', 'status', 'details'].includes(k)),
          name,
        ).toEqual([]);
      }
    });
  });

  it('removes the partial file of a client that walks away mid-upload', async () => {
    await walksAway('/graphql', {
      fields: [
        ['operations', JSON.stringify({ query: UPLOAD, variables: { file: null } })],
        ['map', JSON.stringify({ 0: ['variables.file'] })],
      ],
      fileField: '0',
    });
  });
});

describe('files on REST field routes (multipart)', () => {
  it('takes a 10 MB knowledge file and removes its temporary file; 10 MB + 1 byte stays the field’s 400', async () => {
    const tenMb = new Uint8Array(TEN_MB).fill(0x20);
    tenMb.set(Buffer.from('limite exato'));
    const form = new FormData();
    form.append('name', 'Grande');
    form.append('file', new Blob([tenMb]), 'limite.txt');
    const res = await post('/backend/knowledge', form);
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ content: 'limite exato', file_size: TEN_MB });
    expect(leftInTemp()).toEqual([]);

    const over = new FormData();
    over.append('name', 'Grande demais');
    over.append('file', new Blob([new Uint8Array(TEN_MB + 1).fill(0x61)]), 'grande.txt');
    const refused = await post('/backend/knowledge', over);
    expect(refused.status).toBe(400);
    expect((await refused.json()).code).toBe('ERR_INVALID_INPUT');
    expect(leftInTemp()).toEqual([]);
  });

  it('answers 413 to a streamed 50 MB body before the client has sent it; 400 to a broken form; nothing left', async () => {
    await leavesNothing(async () => {
      const total = 50 * 1024 * 1024;
      const { body, state, contentType } = streamedForm(total, { fields: [['name', 'Enorme']], fileName: 'enorme.txt' });
      const res = await post('/backend/knowledge', body, { 'content-type': contentType }, { duplex: 'half' } as RequestInit);
      const sentWhenAnswered = state.sent;
      expect(res.status).toBe(413);
      expect(await res.json()).toEqual({ code: 'ERR_PAYLOAD_TOO_LARGE', message: expect.any(String) });
      expect(state.finished).toBe(false);
      expect(sentWhenAnswered).toBeLessThan(total / 2);

      for (const broken of [
        rawForm([
          { name: 'name', value: 'x' },
          { name: 'file', filename: 'a\u0000.txt', value: 'texto' },
        ]),
        rawForm([{ name: 'na\u0000me', value: 'x' }]),
        { body: 'nada de multipart aqui', contentType: 'multipart/form-data; boundary=b0undary' },
      ]) {
        const r = await post('/backend/knowledge', broken.body, { 'content-type': broken.contentType });
        expect(r.status).toBe(400);
        expect((await r.json()).code).toBe('ERR_INVALID_INPUT');
      }
    });
  });

  it('removes the partial file of a client that walks away mid-upload', async () => {
    await walksAway('/backend/knowledge', { fields: [['name', 'Abandonado']], fileName: 'abandonado.txt' });
  });
});

/** Starts a streamed upload that stalls after 3 MB, waits until its file is being spooled, then aborts it. */
async function walksAway(path: string, form: Parameters<typeof streamedForm>[1]) {
  await leavesNothing(async () => {
    const { body, contentType } = streamedForm(8 * 1024 * 1024, { ...form, stallAfter: 3 * 1024 * 1024 });
    const controller = new AbortController();
    const response = post(path, body, { 'content-type': contentType }, { duplex: 'half', signal: controller.signal } as RequestInit);
    await expect.poll(() => filesUnder(tempDir).length, { timeout: 15_000 }).toBe(1);
    controller.abort();
    await expect(response).rejects.toThrow();
    await expect.poll(() => leftInTemp(), { timeout: 15_000 }).toEqual([]);
  });
}

describe('the body deadline', () => {
  it('answers 408 to a multipart body that stalls past REQUEST_BODY_TIMEOUT_MS, on both transports, leaving nothing behind', async () => {
    const impatient = await listen(api.app, { ...api.config, host: '127.0.0.1', port: 0, requestBodyTimeoutMs: 1_000 });
    try {
      await leavesNothing(async () => {
        const graphqlForm = streamedForm(8 * 1024 * 1024, {
          stallAfter: 1024 * 1024,
          fields: [
            ['operations', JSON.stringify({ query: UPLOAD, variables: { file: null } })],
            ['map', JSON.stringify({ 0: ['variables.file'] })],
          ],
          fileField: '0',
        });
        const restForm = streamedForm(8 * 1024 * 1024, { stallAfter: 1024 * 1024, fields: [['name', 'Lento']], fileName: 'lento.txt' });
        const send = (path: string, form: ReturnType<typeof streamedForm>) =>
          post(path, form.body, { 'content-type': form.contentType }, { duplex: 'half' } as RequestInit, impatient.url);
        const [onGraphql, onRest] = await Promise.all([send('/graphql', graphqlForm), send('/backend/knowledge', restForm)]);
        expect(onGraphql.status).toBe(408);
        expect(await onGraphql.json()).toEqual({
          errors: [{ message: expect.any(String), extensions: { code: 'REQUEST_TIMEOUT', status: 408 } }],
        });
        expect(onRest.status).toBe(408);
        expect(await onRest.json()).toEqual({ code: 'ERR_REQUEST_TIMEOUT', message: expect.any(String) });
        expect(graphqlForm.state.finished).toBe(false);
        expect(restForm.state.finished).toBe(false);
      });
    } finally {
      await impatient.close();
    }
  });
});

// On a bucket, streaming.test.ts measures the same (the spool before storage is the same on both stores).
describe.runIf(testStorageKind() === 'disk')('memory', () => {
  it('keeps the server’s resident memory growth under 10 MB while /graphql and a REST field route take 10 MB files and refuse 10 MB + 1 byte', async () => {
    // The app in its own process (app-server.ts), measuring the memory it holds every 5 ms. Its
    // /backend/field-uploads is a REST field route for uploadFile: no route of the API stores a File
    // argument as it is (knowledge keeps only the text, which extraction reads whole by design).
    const app = await startMeasuredApp(api);
    stops.push(app.stop);
    const auth = { authorization: `Bearer ${app.key}` };
    const exact = patternBytes(TEN_MB, 21);
    const over = patternBytes(TEN_MB + 1, 22);
    const stored: string[] = [];
    const round = async () => {
      for (const [bytes, accepted] of [
        [exact, true],
        [over, false],
      ] as const) {
        const form = graphqlForm({ query: UPLOAD, variables: { file: null } }, { 0: ['variables.file'] }, [['0', bytes, 'a.bin']]);
        const answer = await (await fetch(`${app.url}/graphql`, { method: 'POST', headers: auth, body: form })).json();
        if (accepted) stored.push(answer.data.uploadFile.file_url);
        else expect(answer.errors[0].extensions.code).toBe('PAYLOAD_TOO_LARGE');

        const rest = await fetch(`${app.url}/backend/field-uploads`, {
          method: 'POST',
          headers: auth,
          body: uploadForm({ bytes, name: 'a.bin' }),
        });
        expect(rest.status).toBe(accepted ? 200 : 413);
        const body = await rest.json();
        if (accepted) stored.push(body.file_url);
        else expect(body.code).toBe('ERR_PAYLOAD_TOO_LARGE');
      }
    };
    // The first round grows the heap once (code paths, V8 spaces); the measured round must not grow it again.
    await round();
    const measured = await app.measure(round);
    expect(measured.growth).toBeLessThan(10 * 1024 * 1024);
    expect(measured.heldGrowth).toBeLessThan(2 * 1024 * 1024);
    expect(stored).toHaveLength(4);
    for (const url of stored) expect(sha256(storedBytesIn(app.storageDir, url))).toBe(sha256(exact));
    expect(storedFiles(app.storageDir).length).toBe(4); // nothing partial
    expect(leftInTemp(app.tempDir)).toEqual([]);
    await app.stop();
    // Under the sampler's collection every 5 ms, four 10 MB requests took 3.5 minutes on a loaded machine.
  }, 420_000);
});
