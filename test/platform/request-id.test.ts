// Request ids and the logs: `X-Request-Id` honoured when it is 1 to 128 characters of A-Za-z0-9._:- and
// generated otherwise, echoed on REST and GraphQL, and written on every log line of its request (a
// service's warning too); credentials never reach a log line.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { log, setLogLevel } from '../../src/log.js';
import { useTestApp } from '../helpers/app.js';
import { form } from '../knowledge/helpers.js';

const api = useTestApp();
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Every line written to stdout and stderr from now on, as text. */
function captureLogs(): string[] {
  const lines: string[] = [];
  setLogLevel('info');
  for (const stream of [process.stdout, process.stderr]) {
    vi.spyOn(stream, 'write').mockImplementation((chunk) => {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      return true;
    });
  }
  return lines;
}

afterEach(() => {
  setLogLevel('silent');
  vi.restoreAllMocks();
});

describe('X-Request-Id', () => {
  const valid = ['abc-123', 'A.b_c:d-9', 'x'.repeat(128), '7']; // the shortest and the longest accepted
  const invalid = ['', 'x'.repeat(129), 'with space', 'é', '<script>', 'a/b', 'a,b'];

  it('REST and GraphQL: a valid one is echoed; an invalid or missing one is replaced by a generated id', async () => {
    const org = await api.newOrg();
    const rest = (id?: string) =>
      api.raw('/backend/tags', { headers: { authorization: `Bearer ${org.key}`, ...(id === undefined ? {} : { 'x-request-id': id }) } });
    const graphql = (id?: string) =>
      api.raw('/graphql', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${org.key}`,
          ...(id === undefined ? {} : { 'x-request-id': id }),
        },
        body: JSON.stringify({ query: '{ tags { id } }' }),
      });
    for (const send of [rest, graphql]) {
      for (const id of valid) {
        const r = await send(id);
        expect(r.status).toBe(200);
        expect(r.headers.get('x-request-id')).toBe(id);
      }
      for (const id of [...invalid, undefined]) {
        const r = await send(id);
        expect(r.status, String(id)).toBe(200);
        expect(r.headers.get('x-request-id'), String(id)).toMatch(UUID);
      }
      // Two requests without one get two ids.
      expect((await send()).headers.get('x-request-id')).not.toBe((await send()).headers.get('x-request-id'));
    }
    // Errors and answers given before any route carry it too.
    const refused = await api.raw('/backend/tags', { headers: { 'x-request-id': 'no-key-1' } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('x-request-id')).toBe('no-key-1');
  });
});

describe('logs', () => {
  it('every line of a request carries its id: the request line and a service’s warning', async () => {
    const org = await api.newOrg();
    const lines = captureLogs();
    // Bytes that look like a PDF but are not one: the extraction refuses it and logs a warning.
    const r = await api.raw('/backend/knowledge', {
      method: 'POST',
      headers: { authorization: `Bearer ${org.key}`, 'x-request-id': 'req-log-1' },
      body: form({ name: 'Falso' }, ['file', 'falso.pdf', '%PDF-1.7\nnot really a pdf']),
    });
    expect(r.status).toBe(400);
    await api.raw('/backend/tags', { headers: { authorization: `Bearer ${org.key}`, 'x-request-id': 'req-log-2' } });
    vi.restoreAllMocks();
    const parsed = lines.map((l) => JSON.parse(l));
    const warning = parsed.find((l) => l.msg === 'knowledge file extraction refused');
    expect(warning).toMatchObject({ level: 'warn', requestId: 'req-log-1', extension: '.pdf' });
    expect(parsed.find((l) => l.msg === 'request' && l.path === '/backend/knowledge')).toMatchObject({
      level: 'info',
      requestId: 'req-log-1',
      status: 400,
      route: '/backend/knowledge',
    });
    expect(parsed.find((l) => l.msg === 'request' && l.path === '/backend/tags')).toMatchObject({ requestId: 'req-log-2', status: 200 });
    // Lines written outside any request carry none.
    const outside = captureLogs();
    log.info('outside');
    vi.restoreAllMocks();
    expect(JSON.parse(outside[0])).not.toHaveProperty('requestId');
  });

  it('never writes a key, an authorization header, a secret, a token or a password', async () => {
    const org = await api.newOrg();
    const wrong = 'fk_live_not-a-real-key-0123456789';
    const lines = captureLogs();
    await api.raw('/backend/tags', { headers: { authorization: `Bearer ${org.key}` } });
    await api.raw('/backend/tags', { headers: { authorization: `Bearer ${wrong}` } });
    await api.raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
      body: '{"query":"{ nope }"}',
    });
    await api.raw(`/backend/admin/tenants`, { method: 'POST', headers: { authorization: `Bearer ${org.key}` } });
    log.warn('a careless call', {
      authorization: `Bearer ${org.key}`,
      headers: { authorization: `Bearer ${org.key}`, cookie: 'session=s3cr3t', 'x-api-key': org.key },
      request: { headers: { authorization: 'Bearer nested-secret' } },
      api_key: org.key,
      webhook: { secret: 'whsec_abc', token: 'tok_abc' },
      password: 'hunter2',
    });
    vi.restoreAllMocks();
    const text = lines.join('\n');
    expect(lines.length).toBeGreaterThanOrEqual(5);
    for (const secret of [org.key, wrong, 'Bearer', 's3cr3t', 'nested-secret', 'whsec_abc', 'tok_abc', 'hunter2'])
      expect(text).not.toContain(secret);
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({
      msg: 'a careless call',
      authorization: '[redacted]',
      headers: { authorization: '[redacted]' },
      webhook: { secret: '[redacted]' },
    });
  });
});
