// The real app in its own process, so a test can measure the server's memory alone:
// `node --expose-gc --import tsx test/uploads/app-server.ts <storage dir> [database url]` opens the
// database (without a URL: PGlite on disk beside the storage directory, as `npm start` runs it; in
// memory its write-ahead log would grow the process's memory), creates an organisation, serves on a
// free port and prints `<url> <api key>`; files sent as `File` arguments are spooled in `<storage
// dir>-tmp`. `/memory?action=start|peak` measures the memory it holds (memorySampler of
// test/storage/upload-server.ts); `POST /buffered` reads a whole body into memory, as a control that the
// measurement tells such a server apart. `POST /backend/field-uploads` is a REST field route for
// `Mutation.uploadFile` (the real REST handler; no route of the API stores a `File` argument as it is).
import path from 'node:path';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { createOrganisation } from '../../src/domains/accounts/service.js';
import { schema } from '../../src/domains/index.js';
import { listen } from '../../src/http/server.js';
import { createRestHandler } from '../../src/rest/handler.js';
import { buildRouteTable } from '../../src/rest/route-table.js';
import { memorySampler } from '../storage/upload-server.js';

const [storageDir, databaseUrl] = process.argv.slice(2);
const db = await openDatabase(databaseUrl ? { databaseUrl } : { pgliteDir: path.join(`${storageDir}-db`, 'db') });
const { api_key } = await createOrganisation(db.prisma, { name: 'Memória' });
// The sampler's full collection every 5 ms slows the uploads down: on a loaded machine a 10 MB body took
// longer than the default 30 s body deadline (408). The deadline is not what this process measures.
// STORAGE and S3_* come from the environment, when the test runs on a bucket.
const bucket = Object.fromEntries(Object.entries(process.env).filter(([name]) => name === 'STORAGE' || name.startsWith('S3_')));
const config = loadConfig({
  NODE_ENV: 'test',
  ...bucket,
  STORAGE_DIR: storageDir,
  UPLOAD_TEMP_DIR: `${storageDir}-tmp`,
  HOST: '127.0.0.1',
  PORT: '0',
  REQUEST_BODY_TIMEOUT_MS: '170000',
});
const app = createApp(config, db);
const fieldUploads = createRestHandler(
  schema,
  buildRouteTable([
    {
      name: 'probe',
      routes: [
        { method: 'POST', path: '/field-uploads', field: 'Mutation.uploadFile', style: 'bare', access: 'member' },
        // The REST schema needs a query root.
        { method: 'GET', path: '/field-uploads/:id', field: 'Query.upload', style: 'bare', access: 'member' },
      ],
    },
  ]),
  app.deps,
);
const memory = memorySampler();
const server = await listen(
  {
    styleOf: app.styleOf,
    fetch: async (request) => {
      const url = new URL(request.url);
      if (url.pathname === '/memory') return memory(url.searchParams.get('action'));
      if (url.pathname === '/buffered' && request.method === 'POST') {
        // What a server that reads a whole upload into memory does (to show the measurement can tell).
        const body = new Uint8Array(await request.arrayBuffer());
        await new Promise((resolve) => setTimeout(resolve, 50)); // e.g. writing it out
        return Response.json({ size: body.byteLength });
      }
      if (url.pathname.startsWith('/backend/field-uploads')) return fieldUploads(request, 'field-upload');
      return app.fetch(request);
    },
  },
  config,
);
process.stdout.write(`${server.url} ${api_key}\n`);
