// A real HTTP server around the storage primitives, wired the way the app serves requests (node:http +
// @whatwg-node/server's adapter): POST /upload reads a multipart form into storage, GET|HEAD /media/<key>
// serves a stored file. Tests start it in-process; run as a script (`node --expose-gc --import tsx
// upload-server.ts <dir>`) it prints its port and also reports its own peak resident memory.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createServerAdapter } from '@whatwg-node/server';
import { normalizeError } from '../../src/errors.js';
import { readMultipartUpload, type MultipartOptions } from '../../src/storage/multipart-stream.js';
import { serveFile } from '../../src/storage/serve.js';
import { createDirectoryStorage } from '../../src/storage/disk-storage.js';
import type { FileStorage } from '../../src/storage/storage.js';

export interface UploadServer {
  url: string;
  storage: FileStorage;
  /** Bytes the server read from each connection's socket so far. */
  socketBytesRead(): number[];
  /** Resolves with the status of the next upload request the server finishes handling (even if the client left). */
  nextUploadHandled(): Promise<number>;
  close(): Promise<void>;
}

/** `store`: a FileStorage, or the root of a directory store. */
export async function startUploadServer(store: FileStorage | string, options?: MultipartOptions): Promise<UploadServer> {
  const storage = typeof store === 'string' ? createDirectoryStorage(store) : store;
  let onHandled: ((status: number) => void)[] = [];
  const handled = (status: number) => {
    for (const resolve of onHandled) resolve(status);
    onHandled = [];
  };

  const adapter = createServerAdapter(async (request: Request) => {
    const url = new URL(request.url);
    if (request.method === 'POST' && url.pathname === '/upload') {
      try {
        const { fields, file } = await readMultipartUpload(request, storage, options);
        handled(200);
        const { head, ...rest } = file ?? { head: new Uint8Array() };
        return Response.json({ fields, file: file ? { ...rest, headLength: head.byteLength } : null });
      } catch (e) {
        const { error } = normalizeError(e);
        handled(error.status);
        return Response.json({ code: error.kind, message: error.message }, { status: error.status });
      }
    }
    const media = /^\/media\/(.*)$/.exec(url.pathname);
    if (media && (request.method === 'GET' || request.method === 'HEAD')) {
      const file = await storage.open(decodeURIComponent(media[1]));
      if (!file) return new Response(null, { status: 404 });
      return serveFile(request, file, { contentType: url.searchParams.get('type') ?? 'application/octet-stream' });
    }
    if (url.pathname === '/memory' && memory) return memory(url.searchParams.get('action'));
    return new Response(null, { status: 404 });
  });

  const sockets: Socket[] = [];
  const server = http.createServer(adapter);
  server.on('connection', (socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    storage,
    socketBytesRead: () => sockets.map((s) => s.bytesRead),
    nextUploadHandled: () => new Promise((resolve) => onHandled.push(resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** In the child process only: `?action=start` begins sampling, `?action=peak` reports the growth. */
let memory: ((action: string | null) => Response) | undefined;

/**
 * The memory a server holds while requests run, sampled right after a full collection every 5 ms (needs
 * --expose-gc): `growth` of resident memory (with MALLOC_MMAP_THRESHOLD_ under the chunk size, freed
 * chunks return their pages at once) and `heldGrowth` of what JavaScript keeps alive (heap and buffers).
 * Without the collection, resident memory also counts body chunks already used but not yet collected
 * (about as many bytes as were received), which says nothing about holding a file; it hid that every
 * chunk of an upload was kept alive until the upload ended.
 */
export function memorySampler(): (action: string | null) => Response {
  const gc = (globalThis as { gc?: () => void }).gc;
  let baseline = { rss: 0, held: 0 };
  let peak = baseline;
  const sample = () => {
    gc?.();
    const { rss, heapUsed, external } = process.memoryUsage();
    peak = { rss: Math.max(peak.rss, rss), held: Math.max(peak.held, heapUsed + external) };
  };
  let timer: NodeJS.Timeout | undefined;
  return (action) => {
    clearInterval(timer);
    if (action === 'start') {
      peak = { rss: 0, held: 0 };
      sample();
      baseline = peak;
      timer = setInterval(sample, 5);
      return Response.json({ baseline: baseline.rss, gc: Boolean(gc) });
    }
    sample();
    return Response.json({
      baseline: baseline.rss,
      peak: peak.rss,
      growth: peak.rss - baseline.rss,
      heldGrowth: peak.held - baseline.held,
    });
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  memory = memorySampler();
  const server = await startUploadServer(process.argv[2]);
  process.stdout.write(`${server.url}\n`);
}
