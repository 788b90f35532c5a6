// The real server process, as `npm start` runs it: start-up output, environment validation, graceful
// SIGTERM (in-flight requests finish), HTTPS with TLS files, REQUIRE_HTTPS, oversized bodies on a socket,
// bodies that stall (408 after REQUEST_BODY_TIMEOUT_MS) or are cut by the client (not an internal error).
import { spawn, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { migratedDataDir } from '../helpers/database.js';
import { POSTGRES_URL, testDatabaseKind } from '../helpers/env.js';
import { generateApiKey } from '../../src/auth/keys.js';

const KEY = generateApiKey();
const children: ChildProcess[] = [];
const schemas: string[] = [];

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  if (schemas.length) {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    for (const s of schemas) await client.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
    await client.end();
  }
});

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

function databaseEnv(): Record<string, string> {
  if (testDatabaseKind() === 'postgres') {
    const schema = `funil_test_srv_${randomBytes(4).toString('hex')}`;
    schemas.push(schema);
    return { DATABASE_URL: `${POSTGRES_URL}?schema=${schema}` };
  }
  return { DATA_DIR: migratedDataDir('funil-srv-') };
}

interface Started {
  proc: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

async function start(env: Record<string, string>, waitFor: RegExp | null = /listening on/): Promise<Started> {
  const port = await freePort();
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, NODE_ENV: 'development', LOG_LEVEL: 'info', PORT: String(port), ...databaseEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(proc);
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  if (waitFor) {
    const deadline = Date.now() + 60_000;
    while (!waitFor.test(out)) {
      if (proc.exitCode !== null) throw new Error(`server exited: ${out}`);
      if (Date.now() > deadline) throw new Error(`server did not start: ${out}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { proc, port, output: () => out, exited };
}

function request(options: http.RequestOptions & { body?: string; secure?: boolean }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const lib = options.secure ? https : http;
    const req = lib.request({ host: '127.0.0.1', rejectUnauthorized: false, ...options }, (res) => {
      let data = '';
      res.on('data', (d) => (data += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: data }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('npm start', () => {
  it('serves, logs JSON lines with a request id, and finishes in-flight requests on SIGTERM', async () => {
    const server = await start({ BOOTSTRAP_API_KEY: KEY });
    expect(server.output()).toContain(`/graphql`);
    expect(server.output()).toContain(`/backend/openapi.json`);
    const health = await request({ port: server.port, path: '/health' });
    expect(health.status).toBe(200);
    const tags = await request({ port: server.port, path: '/backend/tags', headers: { authorization: `Bearer ${KEY}` } });
    expect(tags.status).toBe(200);
    await new Promise((r) => setTimeout(r, 100));
    // Request lines name the organisation, the key and the operation; probes are logged only at debug.
    const logLine = server
      .output()
      .split('\n')
      .find((l) => l.includes('"path":"/backend/tags"'));
    expect(JSON.parse(logLine!)).toMatchObject({
      level: 'info',
      msg: 'request',
      status: 200,
      requestId: expect.any(String),
      tenantId: expect.any(String),
      keyId: expect.any(String),
      operation: 'tags',
    });
    expect(server.output()).not.toContain('"path":"/health"');

    // A request whose body is still arriving when SIGTERM comes in.
    const body = JSON.stringify({ name: 'in-flight', color: '#abcdef' });
    const inFlight = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: server.port,
          path: '/backend/tags',
          method: 'POST',
          headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let data = '';
          res.on('data', (d) => (data += d));
          res.on('end', () => resolve({ status: res.statusCode!, body: data }));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 10));
      setTimeout(() => {
        server.proc.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(10)), 300);
      }, 300);
    });
    const answered = await inFlight;
    expect(answered.status).toBe(201);
    expect(JSON.parse(answered.body).data.name).toBe('in-flight');
    expect(await server.exited).toBe(0);
  });

  it('refuses an invalid environment with a clear message', async () => {
    const server = await start({ PORT: 'not-a-port', TLS_CERT_FILE: '/nope.pem', REQUEST_BODY_TIMEOUT_MS: 'soon' }, null);
    expect(await server.exited).toBe(1);
    expect(server.output()).toMatch(/PORT must be a port number/);
    expect(server.output()).toMatch(/TLS_CERT_FILE and TLS_KEY_FILE must be set together/);
    expect(server.output()).toMatch(/REQUEST_BODY_TIMEOUT_MS must be a positive number of milliseconds/);
  });

  it('serves HTTPS with TLS_CERT_FILE/TLS_KEY_FILE', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'funil-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        `${dir}/key.pem`,
        '-out',
        `${dir}/cert.pem`,
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    const server = await start({ TLS_CERT_FILE: `${dir}/cert.pem`, TLS_KEY_FILE: `${dir}/key.pem`, BOOTSTRAP_API_KEY: KEY });
    expect(server.output()).toContain('https://127.0.0.1');
    const r = await request({ port: server.port, path: '/backend/tags', secure: true, headers: { authorization: `Bearer ${KEY}` } });
    expect(r.status).toBe(200);
    server.proc.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });

  it('with REQUIRE_HTTPS refuses plain HTTP (health probes aside), trusting X-Forwarded-Proto only behind TRUST_PROXY', async () => {
    const server = await start({ REQUIRE_HTTPS: 'true', TRUST_PROXY: 'true', BOOTSTRAP_API_KEY: KEY });
    const plain = await request({ port: server.port, path: '/backend/tags', headers: { authorization: `Bearer ${KEY}` } });
    expect(plain.status).toBe(403);
    expect(JSON.parse(plain.body)).toEqual({ success: false, error: { code: 'FORBIDDEN', message: expect.any(String) } });
    const proxied = await request({
      port: server.port,
      path: '/backend/tags',
      headers: { authorization: `Bearer ${KEY}`, 'x-forwarded-proto': 'https' },
    });
    expect(proxied.status).toBe(200);
    expect((await request({ port: server.port, path: '/health' })).status).toBe(200);
    // An oversized declared body is refused on the socket before it is read.
    const big = await request({
      port: server.port,
      path: '/backend/pipeline/products',
      method: 'POST',
      headers: { 'x-forwarded-proto': 'https', 'content-length': String(50 * 1024 * 1024) },
    });
    expect(big.status).toBe(413);
    expect(JSON.parse(big.body)).toEqual({ code: 'ERR_PAYLOAD_TOO_LARGE', message: expect.any(String) });
    server.proc.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });
});

/** Sends the headers and `partial` of a body declared longer (or chunked), then stalls: what comes back, and when. */
function stalledUpload(port: number, path: string, headers: Record<string, string>, partial: string, giveUpMs = 10_000) {
  const started = Date.now();
  return new Promise<{ status: number | null; body: string; ms: number; closed: boolean }>((resolve) => {
    const req = http.request(
      { host: '127.0.0.1', port, path, method: 'POST', headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        let data = '';
        res.on('data', (d) => (data += d));
        res.on('end', () => {
          // The server must also hang up: the rest of the body is never read.
          const closed = new Promise<boolean>((r) => {
            if (req.socket?.destroyed) return r(true);
            req.socket?.once('close', () => r(true));
            setTimeout(() => r(false), 3_000);
          });
          void closed.then((c) => resolve({ status: res.statusCode!, body: data, ms: Date.now() - started, closed: c }));
        });
      },
    );
    req.on('error', () => resolve({ status: null, body: '', ms: Date.now() - started, closed: true }));
    req.write(partial);
    setTimeout(() => {
      req.destroy();
      resolve({ status: null, body: '', ms: Date.now() - started, closed: false });
    }, giveUpMs);
  });
}

describe('request bodies that do not arrive', () => {
  it('answers a stalled body with 408 in the route style after REQUEST_BODY_TIMEOUT_MS and hangs up', { timeout: 120_000 }, async () => {
    const server = await start({ BOOTSTRAP_API_KEY: KEY, REQUEST_BODY_TIMEOUT_MS: '1000' });
    const auth = { authorization: `Bearer ${KEY}` };
    const declared = { ...auth, 'content-length': '1000' };
    const [envelope, bare, graphql, chunked, unread] = await Promise.all([
      stalledUpload(server.port, '/backend/tags', declared, '{"name":"sl'),
      stalledUpload(server.port, '/backend/pipeline/products', declared, '{"name":"sl'),
      stalledUpload(server.port, '/graphql', declared, '{"query":"{ ta'),
      stalledUpload(server.port, '/graphql', { ...auth, 'transfer-encoding': 'chunked' }, '{"query":"{ ta'),
      // Refused before its body is read (no key): Node's own limit hangs up soon after.
      stalledUpload(server.port, '/backend/tags', { 'content-length': '1000' }, '{"name":"sl'),
    ]);
    for (const r of [envelope, bare, graphql, chunked]) {
      expect(r.status).toBe(408);
      expect(r.ms).toBeGreaterThanOrEqual(900);
      expect(r.ms).toBeLessThan(5_000);
      expect(r.closed).toBe(true);
    }
    const timeout = { code: 'REQUEST_TIMEOUT', message: expect.any(String) };
    expect(JSON.parse(envelope.body)).toEqual({ success: false, error: timeout });
    expect(JSON.parse(bare.body)).toEqual({ code: 'ERR_REQUEST_TIMEOUT', message: expect.any(String) });
    // /graphql answers its own refusals GraphQL-shaped (docs/api.md: 401, 413 and 408 on /graphql).
    const graphqlTimeout = { errors: [{ message: expect.any(String), extensions: { code: 'REQUEST_TIMEOUT', status: 408 } }] };
    expect(JSON.parse(graphql.body)).toEqual(graphqlTimeout);
    expect(JSON.parse(chunked.body)).toEqual(graphqlTimeout);
    expect(unread.status).toBe(401);
    expect(unread.closed).toBe(true);
    expect(unread.ms).toBeLessThan(6_000);

    // A body that arrives in time, in pieces, is served as usual.
    const slowButWhole = await new Promise<number>((resolve, reject) => {
      const body = JSON.stringify({ name: 'in-time', color: '#abcdef' });
      const req = http.request(
        {
          host: '127.0.0.1',
          port: server.port,
          path: '/backend/tags',
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 10));
      setTimeout(() => req.end(body.slice(10)), 500);
    });
    expect(slowButWhole).toBe(201);
    expect(server.output()).not.toContain('unhandled error');
    server.proc.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });

  it('does not log a client that aborts its upload as an internal error', { timeout: 120_000 }, async () => {
    const server = await start({ BOOTSTRAP_API_KEY: KEY });
    const aborted = (path: string, headers: Record<string, string>) =>
      new Promise<void>((resolve) => {
        const req = http.request({
          host: '127.0.0.1',
          port: server.port,
          path,
          method: 'POST',
          headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', ...headers },
        });
        req.on('error', () => resolve());
        req.write('{"name":"ab');
        setTimeout(() => (req.destroy(), resolve()), 300);
      });
    await Promise.all([
      aborted('/backend/tags', { 'content-length': '1000' }),
      aborted('/backend/pipeline/products', { 'content-length': '1000' }),
      aborted('/graphql', { 'content-length': '1000' }),
      aborted('/graphql', { 'transfer-encoding': 'chunked' }),
    ]);
    const deadline = Date.now() + 10_000;
    const requestLines = () =>
      server
        .output()
        .split('\n')
        .filter((l) => l.includes('"msg":"request"') && l.includes('"method":"POST"'));
    while (requestLines().length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(requestLines()).toHaveLength(4);
    for (const line of requestLines()) expect(JSON.parse(line).status).toBe(400);
    expect(server.output()).not.toContain('unhandled error');
    expect(server.output()).not.toMatch(/"level":"error"/);
    expect((await request({ port: server.port, path: '/health' })).status).toBe(200);
    server.proc.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });
});
