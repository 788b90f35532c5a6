// Idempotency-Key on POSTs (decisions.md "What integrations rely on"): replay, reuse with another body,
// concurrent duplicates, key length, organisations apart, GraphQL mutations, and keys that never stay
// stuck (a lease that ended, a record past 24 hours).
import { describe, expect, it } from 'vitest';
import { deleteExpiredIdempotencyKeys } from '../../src/http/idempotency.js';
import { useTestApp, type Org } from '../helpers/app.js';

const api = useTestApp();

let phoneSeq = 0;
const newPhone = () => `+55119876${String(50_000 + ++phoneSeq).padStart(5, '0')}`;

const leadCount = async (org: Org) => (await api.rest('GET', '/backend/leads?limit=100', { key: org.key })).body.pagination.total as number;
const keyRows = (org: Org, key: string) =>
  api.db.prisma.$queryRaw<
    { status: number | null }[]
  >`SELECT status FROM idempotency_keys WHERE tenant_id = ${org.tenantId}::uuid AND key = ${key}`;

describe('Idempotency-Key on REST POSTs', () => {
  it('replays the first answer (status, body, headers) and runs nothing the second time', async () => {
    const org = await api.newOrg();
    const body = { name: 'Ana', phone: newPhone() };
    const first = await api.rest('POST', '/backend/leads', { key: org.key, body, headers: { 'idempotency-key': 'lead-1' } });
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await api.rest('POST', '/backend/leads', { key: org.key, body, headers: { 'idempotency-key': 'lead-1' } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(await leadCount(org)).toBe(1);
    // Without a key, the same body runs again (and meets the phone's uniqueness).
    expect((await api.rest('POST', '/backend/leads', { key: org.key, body })).status).toBe(409);
  });

  it('replays an error answer too: the first request decided the outcome', async () => {
    const org = await api.newOrg();
    const first = await api.rest('POST', '/backend/pipelines', { key: org.key, body: { name: '' }, headers: { 'idempotency-key': 'bad' } });
    expect(first.status).toBe(400);
    const again = await api.rest('POST', '/backend/pipelines', { key: org.key, body: { name: '' }, headers: { 'idempotency-key': 'bad' } });
    expect(again).toMatchObject({ status: 400, body: first.body });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('refuses the same key with another body: 422 in the route’s style', async () => {
    const org = await api.newOrg();
    const headers = { 'idempotency-key': 'k-reused' };
    expect((await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'A', phone: newPhone() }, headers })).status).toBe(200);
    const envelope = await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'B', phone: newPhone() }, headers });
    expect(envelope.status).toBe(422);
    expect(envelope.body).toEqual({ success: false, error: { code: 'IDEMPOTENCY_KEY_REUSED', message: expect.any(String) } });
    // Another path with the same body is another request too, here on a bare route.
    const bare = await api.rest('POST', '/backend/pipelines', { key: org.key, body: { name: 'A', phone: newPhone() }, headers });
    expect(bare.status).toBe(422);
    expect(bare.body).toEqual({ code: 'ERR_IDEMPOTENCY_KEY_REUSED', message: expect.any(String) });
    expect(await leadCount(org)).toBe(1);
  });

  it('runs concurrent duplicates once: the others get 409 or the replay', async () => {
    const org = await api.newOrg();
    const body = { name: 'Concurrent', new_group_name: 'G' };
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        api.rest('POST', '/backend/pipelines', { key: org.key, body, headers: { 'idempotency-key': 'same' } }),
      ),
    );
    const created = answers.filter((a) => a.status === 201 && a.headers.get('idempotent-replayed') === null);
    expect(created).toHaveLength(1);
    for (const a of answers.filter((x) => x !== created[0])) {
      if (a.status === 409) expect(a.body).toEqual({ code: 'ERR_CONFLICT', message: expect.any(String) });
      else expect(a).toMatchObject({ status: 201, body: created[0].body });
    }
    const pipelines = await api.rest('GET', '/backend/pipelines', { key: org.key });
    expect(pipelines.body.pipelines.filter((p: { name: string }) => p.name === 'Concurrent')).toHaveLength(1);
    expect(await keyRows(org, 'same')).toEqual([{ status: 201 }]);
  });

  it('refuses a key over 255 characters (and an empty one) with 400', async () => {
    const org = await api.newOrg();
    for (const key of ['k'.repeat(256), '']) {
      const r = await api.rest('POST', '/backend/leads', {
        key: org.key,
        body: { name: 'A', phone: newPhone() },
        headers: { 'idempotency-key': key },
      });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('VALIDATION_ERROR');
    }
    expect(await leadCount(org)).toBe(0);
    const longest = await api.rest('POST', '/backend/leads', {
      key: org.key,
      body: { name: 'A', phone: newPhone() },
      headers: { 'idempotency-key': 'k'.repeat(255) },
    });
    expect(longest.status).toBe(200);
  });

  it('keeps organisations apart: the same key in two organisations runs in each', async () => {
    const [a, b] = [await api.newOrg('A'), await api.newOrg('B')];
    const body = { name: 'Ana', phone: newPhone() };
    const ra = await api.rest('POST', '/backend/leads', { key: a.key, body, headers: { 'idempotency-key': 'shared' } });
    const rb = await api.rest('POST', '/backend/leads', { key: b.key, body, headers: { 'idempotency-key': 'shared' } });
    expect([ra.status, rb.status]).toEqual([200, 200]);
    expect(rb.headers.get('idempotent-replayed')).toBeNull();
    expect(rb.body.data.id).not.toBe(ra.body.data.id);
  });

  it('does not stay stuck: a running key whose lease ended is taken over; one still leased is 409', async () => {
    const org = await api.newOrg();
    const body = { name: 'Stuck', new_group_name: 'G' };
    // A request that died mid-way (its process killed) left its running record behind: made here from
    // a real record (the request's own hash) put back in the running state.
    const pipelineName = async () =>
      (await api.rest('GET', '/backend/pipelines', { key: org.key })).body.pipelines.map((p: { name: string }) => p.name);
    expect((await api.rest('POST', '/backend/pipelines', { key: org.key, body, headers: { 'idempotency-key': 'stuck' } })).status).toBe(
      201,
    );
    await api.db.prisma.$executeRaw`DELETE FROM pipelines WHERE tenant_id = ${org.tenantId}::uuid`;
    const running = (lease: string) =>
      api.db.prisma.$executeRawUnsafe(
        `UPDATE idempotency_keys SET status = NULL, body = NULL, lock_id = gen_random_uuid(), locked_until = now() + $2::interval WHERE tenant_id = $1::uuid`,
        org.tenantId,
        lease,
      );
    await running('1 minute');
    expect((await api.rest('POST', '/backend/pipelines', { key: org.key, body, headers: { 'idempotency-key': 'stuck' } })).status).toBe(
      409,
    );
    await running('-1 second');
    const r = await api.rest('POST', '/backend/pipelines', { key: org.key, body, headers: { 'idempotency-key': 'stuck' } });
    expect(r.status).toBe(201);
    expect(r.headers.get('idempotent-replayed')).toBeNull();
    expect(await pipelineName()).toEqual(['Stuck']);
    expect(await keyRows(org, 'stuck')).toEqual([{ status: 201 }]);
  });

  it('forgets a key after 24 hours: the record is overwritten, and the cleanup removes old ones', async () => {
    const org = await api.newOrg();
    const headers = { 'idempotency-key': 'old' };
    expect((await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'A', phone: newPhone() }, headers })).status).toBe(200);
    await api.db.prisma
      .$executeRaw`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE tenant_id = ${org.tenantId}::uuid`;
    const later = await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'B', phone: newPhone() }, headers });
    expect(later.status).toBe(200);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    expect(await leadCount(org)).toBe(2);
    await api.db.prisma
      .$executeRaw`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE tenant_id = ${org.tenantId}::uuid`;
    expect(await deleteExpiredIdempotencyKeys(api.db.prisma)).toBeGreaterThanOrEqual(1);
    expect(await keyRows(org, 'old')).toEqual([]);
  });

  it('refuses a key on a multipart body (files are streamed, not replayed)', async () => {
    const org = await api.newOrg();
    const form = new FormData();
    form.set('file', new Blob(['hello'], { type: 'text/plain' }), 'a.txt');
    form.set('type', 'document');
    const r = await api.rest('POST', '/backend/uploads', { key: org.key, body: form, headers: { 'idempotency-key': 'upload-1' } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('ERR_INVALID_INPUT');
  });
});

describe('Idempotency-Key on /graphql mutations', () => {
  const mutation = 'mutation ($name: String!, $phone: String!) { createLead(name: $name, phone: $phone) { id name } }';
  const post = (org: Org, variables: object, key?: string) =>
    api.raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}`, ...(key ? { 'idempotency-key': key } : {}) },
      body: JSON.stringify({ query: mutation, variables }),
    });

  it('replays a mutation, refuses the key with other variables (422), and ignores keys on queries', async () => {
    const org = await api.newOrg();
    const variables = { name: 'Gql', phone: newPhone() };
    const first = await post(org, variables, 'gql-1');
    const firstBody = await first.json();
    expect(first.status).toBe(200);
    expect(firstBody.data.createLead.name).toBe('Gql');
    const again = await post(org, variables, 'gql-1');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toEqual(firstBody);
    expect(await leadCount(org)).toBe(1);

    const reused = await post(org, { name: 'Other', phone: newPhone() }, 'gql-1');
    expect(reused.status).toBe(422);
    expect((await reused.json()).errors[0].extensions).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', status: 422 });

    const query = () =>
      api.raw('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}`, 'idempotency-key': 'gql-1' },
        body: JSON.stringify({ query: '{ leads { pagination { total } } }' }),
      });
    const read = await query();
    expect(read.status).toBe(200);
    expect(read.headers.get('idempotent-replayed')).toBeNull();
  });

  it('refuses an over-long key with 400 INVALID_INPUT', async () => {
    const org = await api.newOrg();
    const r = await post(org, { name: 'X', phone: newPhone() }, 'g'.repeat(256));
    expect(r.status).toBe(400);
    expect((await r.json()).errors[0].extensions.code).toBe('INVALID_INPUT');
  });
});
