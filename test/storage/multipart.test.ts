// Streamed multipart uploads over a real node:http server with real fetch bodies: the 10 MB boundary,
// resident memory while uploading, a 50 MB body cut off early, a client that walks away, and every
// malformed form answered with 400 and nothing left on disk.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import http from 'node:http';
import readline from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FILE_BYTES } from '../../src/config.js';
import { filesUnder, patternBytes, sameBytes, streamedForm, temporaryRoot } from './files.js';
import { startUploadServer, type UploadServer } from './upload-server.js';

const TEN_MB = 10 * 1024 * 1024;
const servers: UploadServer[] = [];
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const server of servers) await server.close();
  for (const child of children) child.kill();
});

async function newServer(): Promise<{ server: UploadServer; root: string }> {
  const root = temporaryRoot();
  const server = await startUploadServer(root);
  servers.push(server);
  return { server, root };
}

function form(
  fields: Record<string, string>,
  file?: { bytes: Uint8Array<ArrayBuffer>; name: string; type?: string; field?: string },
): FormData {
  const data = new FormData();
  for (const [name, value] of Object.entries(fields)) data.append(name, value);
  if (file) data.append(file.field ?? 'file', new Blob([file.bytes], { type: file.type ?? 'application/octet-stream' }), file.name);
  return data;
}

const post = (server: UploadServer, body: BodyInit, headers?: Record<string, string>) =>
  fetch(`${server.url}/upload`, { method: 'POST', body, headers });

describe('readMultipartUpload over HTTP', () => {
  let server: UploadServer;
  let root: string;
  beforeAll(async () => ({ server, root } = await newServer()));

  it('stores the file part as it arrives and collects the text fields around it', async () => {
    const bytes = patternBytes(200_000, 9);
    const data = new FormData();
    data.append('type', 'media');
    data.append('file', new Blob([bytes], { type: 'image/png' }), 'foto da loja.png');
    data.append('folder', 'vitrine'); // after the file: still collected
    const res = await post(server, data);
    expect(res.status).toBe(200);
    const { fields, file } = await res.json();
    expect(fields).toEqual({ type: 'media', folder: 'vitrine' });
    expect(file).toMatchObject({ size: 200_000, filename: 'foto da loja.png', declaredType: 'image/png', headLength: 4100 });
    const opened = (await server.storage.open(file.key))!;
    expect(sameBytes(new Uint8Array(await new Response(opened.stream()).arrayBuffer()), bytes)).toBe(true);
    expect(filesUnder(root).filter((f) => f.startsWith('.partial'))).toEqual([]);
  });

  it('decodes UTF-8 file names and drops any path a client puts in them', async () => {
    const res = await post(server, form({}, { bytes: new Uint8Array(3), name: '../../relatório ção.pdf' }));
    expect(res.status).toBe(200);
    expect((await res.json()).file.filename).toBe('relatório ção.pdf');
  });

  it('returns file null for a form without a file and for an empty file input', async () => {
    const none = await post(server, form({ type: 'audio' }));
    expect(await none.json()).toEqual({ fields: { type: 'audio' }, file: null });
    // What a browser sends for a file input left blank: a file part with an empty name and no content.
    const blank = form({ type: 'media' }, { bytes: new Uint8Array(), name: '' });
    expect((await (await post(server, blank)).json()).file).toBeNull();
  });

  it('accepts a file of exactly 10 MB and refuses 10 MB + 1 byte with 413, leaving nothing behind', async () => {
    expect(MAX_FILE_BYTES).toBe(TEN_MB);
    const exact = patternBytes(TEN_MB, 1);
    const accepted = await post(server, form({ type: 'media' }, { bytes: exact, name: 'exato.bin' }));
    expect(accepted.status).toBe(200);
    const { file } = await accepted.json();
    expect(file.size).toBe(TEN_MB);
    const stored = new Uint8Array(await new Response((await server.storage.open(file.key))!.stream()).arrayBuffer());
    expect(createHash('sha256').update(stored).digest('hex')).toBe(createHash('sha256').update(exact).digest('hex'));
    const before = filesUnder(root);

    const over = await post(server, form({ type: 'media' }, { bytes: patternBytes(TEN_MB + 1, 1), name: 'grande.bin' }));
    expect(over.status).toBe(413);
    expect((await over.json()).code).toBe('PAYLOAD_TOO_LARGE');
    expect(filesUnder(root)).toEqual(before);
  });

  it('refuses malformed forms with 400 and leaves no file behind', async () => {
    const before = filesUnder(root);
    const boundary = 'xyz';
    const multipart = { 'content-type': `multipart/form-data; boundary=${boundary}` };
    const part = (name: string, value: string, filename?: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}\r\n\r\n${value}\r\n`;
    const cases: [string, BodyInit, Record<string, string> | undefined][] = [
      ['JSON instead of a form', '{"type":"media"}', { 'content-type': 'application/json' }],
      ['multipart without a boundary', part('type', 'media'), { 'content-type': 'multipart/form-data; charset=utf-8' }],
      ['a body that is not multipart', 'hello', multipart],
      [
        'a form cut off inside the file part',
        part('type', 'media') +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\n` +
          'x'.repeat(100_000),
        multipart,
      ],
      ['a part header that never ends', `--${boundary}\r\nContent-Disposition: form-data; name="type"`, multipart],
      ['two files', form({}, { bytes: new Uint8Array(10), name: 'a.bin' }), undefined],
      ['a file under another field name', form({}, { bytes: new Uint8Array(10), name: 'a.bin', field: 'arquivo' }), undefined],
      ['a field over 64 KiB', form({ content: 'x'.repeat(64 * 1024 + 1) }), undefined],
      ['more than 20 fields', form(Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`f${i}`, 'x']))), undefined],
      ['a repeated field', part('type', 'media') + part('type', 'audio') + `--${boundary}--\r\n`, multipart],
      ['a NUL in a field', part('folder', 'a\0b') + `--${boundary}--\r\n`, multipart],
      ['a NUL in the file name', part('file', 'conteudo', 'a\0.png') + `--${boundary}--\r\n`, multipart],
    ];
    const twoFiles = cases[5][1] as FormData;
    twoFiles.append('file', new Blob([new Uint8Array(10)]), 'b.bin');
    for (const [name, body, headers] of cases) {
      const res = await post(server, body, headers);
      expect(res.status, name).toBe(400);
      expect((await res.json()).code, name).toBe('INVALID_INPUT');
    }
    expect(filesUnder(root)).toEqual(before);
  });

  it('refuses a declared Content-Length over the body limit before reading the body', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${server.url}/upload`, {
        method: 'POST',
        headers: { 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(50 * 1024 * 1024) },
      });
      req.on('response', (res) => resolve(res.statusCode!));
      req.on('error', reject);
      req.write('--x\r\n'); // the rest never comes: the answer must not wait for it
    });
    expect(status).toBe(413);
  });
});

describe('large and broken uploads', () => {
  it('answers 413 to a 50 MB streamed body before the client has sent it, and stops reading', async () => {
    const { server, root } = await newServer();
    const total = 50 * 1024 * 1024;
    const { body, state, contentType } = streamedForm(total);
    const res = await fetch(`${server.url}/upload`, {
      method: 'POST',
      body,
      headers: { 'content-type': contentType },
      duplex: 'half',
    } as RequestInit);
    const sentWhenAnswered = state.sent;
    expect(res.status).toBe(413);
    expect((await res.json()).code).toBe('PAYLOAD_TOO_LARGE');
    expect(state.finished).toBe(false);
    expect(sentWhenAnswered).toBeLessThan(total / 2);
    // The server read a little past 10 MB, plus what socket buffers held, and then no more.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const [bytesRead] = server.socketBytesRead();
    expect(bytesRead).toBeGreaterThan(TEN_MB);
    expect(bytesRead).toBeLessThan(TEN_MB + 4 * 1024 * 1024);
    expect(filesUnder(root)).toEqual([]);
  });

  it('leaves no partial file when the client aborts mid-upload', async () => {
    const { server, root } = await newServer();
    const { body, contentType } = streamedForm(8 * 1024 * 1024, { stallAfter: 3 * 1024 * 1024 });
    const controller = new AbortController();
    const handled = server.nextUploadHandled();
    const response = fetch(`${server.url}/upload`, {
      method: 'POST',
      body,
      headers: { 'content-type': contentType },
      duplex: 'half',
      signal: controller.signal,
    } as RequestInit);
    // The partial file exists while the upload is under way…
    await expect.poll(() => filesUnder(root).filter((f) => f.startsWith('.partial')).length, { timeout: 10_000 }).toBe(1);
    controller.abort();
    await expect(response).rejects.toThrow();
    // …and is gone once the server has dealt with the broken request.
    expect(await handled).toBe(400);
    expect(filesUnder(root)).toEqual([]);
  });

  it('keeps resident memory growth under 10 MB while taking a 10 MB upload and refusing a 10 MB + 1 one', async () => {
    // A separate server process, so only the server's memory is measured (the test's own FormData bodies
    // live here). It samples its memory right after a full collection every 5 ms while the uploads run
    // (memorySampler): a server that kept the file, or every chunk of it, holds 10 MB more; this one holds
    // well under 1 MB more.
    const root = temporaryRoot();
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', 'test/storage/upload-server.ts', root], {
      env: { ...process.env, MALLOC_MMAP_THRESHOLD_: '16384' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    const url = await new Promise<string>((resolve) => readline.createInterface({ input: child.stdout! }).once('line', resolve));
    const round = async () => {
      const exact = await fetch(`${url}/upload`, {
        method: 'POST',
        body: form({ type: 'media' }, { bytes: patternBytes(TEN_MB, 2), name: 'a.bin' }),
      });
      expect(exact.status).toBe(200);
      const over = await fetch(`${url}/upload`, {
        method: 'POST',
        body: form({ type: 'media' }, { bytes: patternBytes(TEN_MB + 1, 3), name: 'b.bin' }),
      });
      expect(over.status).toBe(413);
    };
    // The first round grows the heap once (code paths, V8 spaces); the measured round must not grow it again.
    await round();
    const start = await (await fetch(`${url}/memory?action=start`)).json();
    expect(start.gc).toBe(true);
    await round();
    const { growth, heldGrowth } = await (await fetch(`${url}/memory?action=peak`)).json();
    expect(growth).toBeLessThan(10 * 1024 * 1024);
    expect(heldGrowth).toBeLessThan(2 * 1024 * 1024);
    expect(filesUnder(root).length).toBe(2); // the two accepted files, nothing partial
  });
});
