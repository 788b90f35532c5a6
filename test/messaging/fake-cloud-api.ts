// A fake WhatsApp Cloud API on loopback for a test file, with the `messages.deliver` queue running
// against it: every body a send posts is kept in `sent` (emptied before each test), and each is answered
// 200 with the next `wamid.<prefix><n>`. Started before the file's tests, stopped after them.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { messageDeliveryQueue } from '../../src/domains/messaging/deliver.js';
import { runJobs, type JobRunner } from '../../src/jobs/runner.js';
import type { TestClient } from '../helpers/app.js';

export interface FakeCloudApi {
  /** The request bodies received, in order. */
  readonly sent: any[];
  /** The base URL to give a channel as `api_url`. */
  url(): string;
}

export function useFakeCloudApi(api: TestClient, idPrefix: string): FakeCloudApi {
  const sent: any[] = [];
  let server: http.Server;
  let url = '';
  let runner: JobRunner;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        sent.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ messages: [{ id: `wamid.${idPrefix}${sent.length}` }] }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    runner = await runJobs(api.db, {
      queues: [{ ...messageDeliveryQueue({ db: api.db, config: api.config }), retryDelays: [50] }],
      pollMs: 100,
    });
  });
  afterAll(async () => {
    await runner?.stop({ timeoutMs: 2_000 });
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    sent.length = 0;
  });
  return { sent, url: () => url };
}
