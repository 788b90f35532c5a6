// Shared by the webhook tests: a real HTTP receiver on 127.0.0.1, an app with the job runner started
// (private URLs allowed, a short retry schedule), webhook factories and signature checks.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, expect, vi } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { startJobRunner } from '../../src/workers.js';
import type { JobRunner } from '../../src/jobs/runner.js';
import { useTestApp, type Org, type TestClient } from '../helpers/app.js';

export interface Hit {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  json: any;
  at: number;
}

export type Reply = (hit: Hit, res: http.ServerResponse) => void;

export interface Receiver {
  url: string;
  port: number;
  hits: Hit[];
  /** What the receiver answers; changeable while it runs. Default 204. */
  reply: Reply;
  /** Hits carrying this webhook-id. */
  hitsFor(msgId: string): Hit[];
  close(): Promise<void>;
}

const open: Receiver[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});

export const ok204: Reply = (_hit, res) => res.writeHead(204).end();

/** A receiver on 127.0.0.1 that records every request before answering it with `reply`. */
export async function receiver(reply: Reply = ok204, options: { keep?: boolean; port?: number } = {}): Promise<Receiver> {
  const hits: Hit[] = [];
  const state: Receiver = {
    url: '',
    port: 0,
    hits,
    reply,
    hitsFor: (msgId) => hits.filter((h) => h.headers['webhook-id'] === msgId),
    close: async () => {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let json: unknown;
      try {
        json = JSON.parse(body.toString('utf8'));
      } catch {
        json = undefined;
      }
      const hit = { path: req.url!, headers: req.headers, body, json, at: Date.now() };
      hits.push(hit);
      state.reply(hit, res);
    });
  });
  await new Promise<void>((done) => server.listen(options.port ?? 0, '127.0.0.1', done));
  state.port = (server.address() as AddressInfo).port;
  state.url = `http://127.0.0.1:${state.port}/hook`;
  if (!options.keep) open.push(state);
  return state;
}

/** The app with its job runner (private URLs allowed, retries after 200 ms); the runner stops before the database closes. */
export function useWebhookApp(env: Record<string, string> = {}): TestClient {
  const api = useTestApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '0,200,200', ...env });
  let runner: JobRunner | undefined;
  beforeAll(async () => {
    runner = await startJobRunner(api.db, api.config);
  });
  afterAll(async () => {
    await runner?.stop({ timeoutMs: 2_000 });
  });
  return api;
}

export interface CreatedHook {
  id: string;
  url: string;
  events: string[];
  active: boolean;
  created_at: string;
  secret: string;
}

export async function makeWebhook(api: TestClient, org: Org, body: Record<string, unknown>): Promise<CreatedHook> {
  const r = await api.rest('POST', '/backend/webhooks', { key: org.key, body });
  expect(r.status, `webhook: ${JSON.stringify(r.body)}`).toBe(201);
  return r.body.data;
}

/** Verifies a hit with the Standard Webhooks reference library; returns the parsed payload or throws. */
export function verifyStandard(secret: string, hit: Hit): any {
  return new Webhook(secret).verify(hit.body, {
    'webhook-id': String(hit.headers['webhook-id']),
    'webhook-timestamp': String(hit.headers['webhook-timestamp']),
    'webhook-signature': String(hit.headers['webhook-signature']),
  });
}

export { plainSignature } from './signature.js';

export const signaturesOf = (hit: Hit) => String(hit.headers['webhook-signature']).split(' ');

export async function waitFor<T>(check: () => T | Promise<T>, timeout = 15_000): Promise<T> {
  return vi.waitFor(check, { timeout, interval: 50 });
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The delivery log of a hook as the API answers it. */
export async function deliveries(api: TestClient, org: Org, hookId: string, query = ''): Promise<any[]> {
  const r = await api.rest('GET', `/backend/webhooks/${hookId}/deliveries${query}`, { key: org.key });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data;
}
