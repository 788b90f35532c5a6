// The pace of an organisation's knowledge files while others are active (extract/pace.ts): after a file of
// N bytes, its next file starts no sooner than N ÷ EXTRACT_PACE_BYTES_PER_SECOND seconds later, on REST
// and GraphQL alike; an organisation alone on the server is not paced, another organisation's files are
// not held by it, and a client that goes away while its file waits leaves nothing written.
// Files sent at once queue one after another; a wait longer than EXTRACT_WAIT_MS is not made: the request
// gets 429 with the wait as Retry-After.
// 1,000 bytes a second here: a 40 kB file makes the organisation's next one wait 40 s, far longer than
// anything below waits, so the order of the answers tells what was paced; EXTRACT_WAIT_MS is 60 s.
import { describe, expect, it, vi } from 'vitest';
import { ACTIVE_FOR_MS } from '../../src/http/active-organisations.js';
import { uploadAdmission } from '../../src/domains/knowledge/extract/index.js';
import { knowledgePace } from '../../src/domains/knowledge/extract/pace.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { form } from './helpers.js';

const api = useTestApp({ EXTRACT_PACE_BYTES_PER_SECOND: '1000', EXTRACT_WAIT_MS: '60000' });

/** 40 kB of CSV: read in the server (no extraction process), and 40 s of pace at 1,000 bytes a second. */
const CSV = 'nome,telefone\n' + 'Ana,+5511987650001\n'.repeat(2_100);

function upload(org: Org, name: string, content = CSV, signal?: AbortSignal) {
  const body = form({ name }, ['file', `${name}.csv`, content]);
  return api.raw('/backend/knowledge', { method: 'POST', headers: { authorization: `Bearer ${org.key}` }, body, signal });
}

function graphqlUpload(org: Org, name: string, signal?: AbortSignal) {
  const body = new FormData();
  body.set(
    'operations',
    JSON.stringify({
      query: `mutation($file: File!) { createKnowledgeItem(name: "${name}", file: $file) { id } }`,
      variables: { file: null },
    }),
  );
  body.set('map', JSON.stringify({ 0: ['variables.file'] }));
  body.set('0', new File([CSV], `${name}.csv`));
  return api.raw('/graphql', { method: 'POST', headers: { authorization: `Bearer ${org.key}` }, body, signal });
}

/** Whether `promise` settles within `ms`: a paced upload here waits 40 s, an unpaced one milliseconds. */
const settlesWithin = (promise: Promise<unknown>, ms: number) =>
  Promise.race([promise.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), ms))]);

/**
 * The answer to a request whose client went away: no one reads it over HTTP (these requests run in-process),
 * but it says what the server made of it: a 400, not a 500 and its error log.
 */
async function expectClientGone(answer: Promise<Response>) {
  const response = await answer;
  const body = await response.json();
  expect(response.status, JSON.stringify(body)).toBe(400);
  // REST's bare error, or GraphQL's `errors`.
  expect(body.errors?.[0]?.extensions.code ?? body.code).toMatch(/^(ERR_)?INVALID_INPUT$/);
}

const itemNames = async (org: Org) =>
  (await api.rest('GET', '/backend/knowledge', { key: org.key })).body.map((item: { name: string }) => item.name).sort();

describe('the pace of knowledge files', () => {
  it('leaves an organisation alone on the server unpaced', async () => {
    const a = await api.newOrg('A');
    expect((await upload(a, 'first')).status).toBe(201);
    const second = upload(a, 'second');
    expect(await settlesWithin(second, 15_000)).toBe(true);
    expect((await second).status).toBe(201);
  });

  it('paces an organisation’s next file while another is active, and not the other’s', { timeout: 60_000 }, async () => {
    const a = await api.newOrg('A');
    const b = await api.newOrg('B');
    await new Promise((resolve) => setTimeout(resolve, ACTIVE_FOR_MS)); // the previous test's organisation is no longer active
    expect((await upload(a, 'first')).status).toBe(201);
    // B becomes active: A's next file now waits its 40 s.
    expect((await api.rest('GET', '/backend/knowledge', { key: b.key })).status).toBe(200);
    const cancel = new AbortController();
    const second = upload(a, 'second', CSV, cancel.signal);
    // Once it waits (it has booked its 40 s after the first file's),
    await vi.waitFor(() => expect(knowledgePace(api.config).bookedAhead(a.tenantId)).toBeGreaterThan(60_000), { timeout: 10_000 });
    // a file sent beside it (GraphQL's are not admitted one at a time) queues after it: 80 s away, past the
    // 60 s a file may wait, so it is refused at once rather than waiting out the same 40 s.
    const beside = await graphqlUpload(a, 'beside');
    const refusal = (await beside.json()).errors[0].extensions;
    expect(refusal).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
    expect(refusal.retry_after).toBeGreaterThan(60);
    expect(refusal.retry_after).toBeLessThanOrEqual(80);
    // B's own files are not held by A's pace, nor by each other (B's first file books 9 ms for B's next).
    expect((await upload(b, 'b1', 'nome\nBia\n')).status).toBe(201);
    expect((await upload(b, 'b2', 'nome\nCaio\n')).status).toBe(201);
    expect(await settlesWithin(second, 1_000)).toBe(false);
    // A's client gives up: its file leaves the wait, the admission is free, and nothing of it was written.
    cancel.abort();
    await expectClientGone(second);
    await vi.waitFor(() => expect(uploadAdmission(api.config).state).toEqual({ running: 0, waiting: 0 }), { timeout: 10_000 });
    expect(await itemNames(a)).toEqual(['first']);
    expect(await itemNames(b)).toEqual(['b1', 'b2']);
  });

  it('paces GraphQL uploads as REST ones, and lets them go when their client does', { timeout: 60_000 }, async () => {
    const a = await api.newOrg('A');
    const b = await api.newOrg('B');
    expect((await upload(a, 'first')).status).toBe(201);
    expect((await api.rest('GET', '/backend/knowledge', { key: b.key })).status).toBe(200);
    const cancel = new AbortController();
    const second = graphqlUpload(a, 'second', cancel.signal);
    const pace = knowledgePace(api.config);
    // It waits, having booked its 40 s after the first file's.
    await vi.waitFor(() => expect(pace.bookedAhead(a.tenantId)).toBeGreaterThan(60_000), { timeout: 10_000 });
    expect(await settlesWithin(second, 500)).toBe(false);
    cancel.abort();
    // A 400 (a 500 and an error in the log before), though no one reads it.
    await expectClientGone(second);
    // The time it gave up is free again: A's next file waits out the first one's 40 s (80 s away, it
    // would be refused), and goes when its client does.
    expect(pace.bookedAhead(a.tenantId)).toBeLessThanOrEqual(40_000);
    const again = new AbortController();
    const third = graphqlUpload(a, 'third', again.signal);
    expect(await settlesWithin(third, 1_000)).toBe(false);
    again.abort();
    await expectClientGone(third);
    expect(await itemNames(a)).toEqual(['first']);
  });

  it('answers 429 with Retry-After, at once, when the wait would pass EXTRACT_WAIT_MS', { timeout: 60_000 }, async () => {
    const a = await api.newOrg('A');
    const b = await api.newOrg('B');
    // 70 kB: 70 s before A's next file, past the 60 s a file may wait.
    const large = 'nome,telefone\n' + 'Ana,+5511987650001\n'.repeat(3_700);
    expect(large.length).toBeGreaterThan(70_000);
    expect((await upload(a, 'large', large)).status).toBe(201);
    expect((await api.rest('GET', '/backend/knowledge', { key: b.key })).status).toBe(200);
    const refused = upload(a, 'next');
    expect(await settlesWithin(refused, 15_000)).toBe(true);
    const r = await refused;
    expect(r.status).toBe(429);
    expect(await r.json()).toEqual({
      code: 'ERR_RATE_LIMITED',
      message: expect.stringMatching(/próximo pode ser enviado em \d+ s/),
      retry_after: Number(r.headers.get('retry-after')),
    });
    const retryAfter = Number(r.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(60);
    expect(retryAfter).toBeLessThanOrEqual(71);
    // GraphQL: the same refusal in `errors`.
    const graph = await (await graphqlUpload(a, 'graph next')).json();
    expect(graph.errors[0].extensions).toMatchObject({ code: 'RATE_LIMITED', status: 429, retry_after: expect.any(Number) });
    expect(uploadAdmission(api.config).state).toEqual({ running: 0, waiting: 0 });
    expect(await itemNames(a)).toEqual(['large']);
  });
});
