// Idempotency records belong to the caller: every POST route and every mutation, sent with one
// Idempotency-Key and body by two callers of one organisation (its owner, and an operator's key narrowed
// to `pipeline.view`) and by another organisation, is never answered with another caller's stored
// answer, either way round; and a stored answer keeps no secret.
import { randomUUID } from 'node:crypto';
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  type GraphQLInputType,
  type GraphQLArgument,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { domains, schema } from '../../src/domains/index.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { nextPhone } from '../helpers/factories.js';

const api = useTestApp();

const postRoutes = domains
  .flatMap((d) => d.routes)
  .filter((r) => r.method === 'POST' && r.access !== 'public' && r.access !== 'platform')
  .map((r) => r.path.replace(/:[a-z_]+/g, () => randomUUID()));

const replayed = (r: { headers: Headers }) => r.headers.get('idempotent-replayed') === 'true';

interface Callers {
  owner: Org;
  narrowed: Org;
  other: Org;
}

async function callers(): Promise<Callers> {
  const owner = await api.newOrg('A');
  const narrowed = { ...owner, key: await api.keyFor(owner, 'operator', ['pipeline.view']) };
  return { owner, narrowed, other: await api.newOrg('B') };
}

describe('Idempotency-Key records are the caller’s (REST)', () => {
  it.each(['owner first', 'narrowed key first'])('no POST route replays one caller’s answer to another (%s)', async (order) => {
    const { owner, narrowed, other } = await callers();
    const sequence = order === 'owner first' ? [owner, narrowed, other] : [narrowed, owner, other];
    for (const path of postRoutes) {
      const key = `matrix-${randomUUID()}`;
      const send = (org: Org) =>
        api.raw(`/backend${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json', 'idempotency-key': key },
          body: '{}',
        });
      const answers = [];
      for (const caller of sequence) answers.push(await send(caller));
      expect(answers.map(replayed), path).toEqual([false, false, false]);
      // The first caller's own retry is still its own answer (nothing planted by the others).
      const retry = await send(sequence[0]);
      if (answers[0].status === 401 || answers[0].status === 403) expect(replayed(retry), path).toBe(false);
      else expect([retry.status, replayed(retry)], path).toEqual([answers[0].status, true]);
    }
  });

  it('a narrowed key resending the owner’s key creation gets 403, not the owner’s new key', async () => {
    const { owner, narrowed } = await callers();
    const body = { name: 'integration' };
    const headers = { 'idempotency-key': 'mint-1' };
    const first = await api.rest('POST', '/backend/api-keys', { key: owner.key, body, headers });
    expect(first.status).toBe(201);
    expect(first.body.data.key).toMatch(/^fnl_/);
    const stolen = await api.rest('POST', '/backend/api-keys', { key: narrowed.key, body, headers });
    expect(stolen.status).toBe(403);
    expect(JSON.stringify(stolen.body)).not.toContain(first.body.data.key);
    // The owner's retry replays the key's record without the key: it is shown once.
    const retry = await api.rest('POST', '/backend/api-keys', { key: owner.key, body, headers });
    expect(replayed(retry)).toBe(true);
    expect(retry.body.data).toEqual({ ...first.body.data, key: null });
  });

  it('an operator’s 403 is not stored: the owner’s first request with the same key runs', async () => {
    const { owner } = await callers();
    const operator = { ...owner, key: await api.keyFor(owner, 'operator') };
    const body = { url: 'https://hooks.example.com/a', events: ['lead.created'] };
    const headers = { 'idempotency-key': 'hook-1' };
    expect((await api.rest('POST', '/backend/webhooks', { key: operator.key, body, headers })).status).toBe(403);
    const first = await api.rest('POST', '/backend/webhooks', { key: owner.key, body, headers });
    expect([first.status, replayed(first)]).toEqual([201, false]);
    expect(first.body.data.secret).toMatch(/^whsec_/);
    const again = await api.rest('POST', '/backend/webhooks', { key: operator.key, body, headers });
    expect([again.status, replayed(again)]).toEqual([403, false]);
    const retry = await api.rest('POST', '/backend/webhooks', { key: owner.key, body, headers });
    expect([retry.status, replayed(retry), retry.body.data.secret, retry.body.data.id]).toEqual([201, true, null, first.body.data.id]);
  });

  it('keeps no secret in its records: no API key or webhook secret in idempotency_keys', async () => {
    const { owner } = await callers();
    const minted = await api.rest('POST', '/backend/api-keys', {
      key: owner.key,
      body: { name: 'k' },
      headers: { 'idempotency-key': 's-1' },
    });
    const hook = await api.rest('POST', '/backend/webhooks', {
      key: owner.key,
      body: { url: 'https://hooks.example.com/b', events: ['lead.created'] },
      headers: { 'idempotency-key': 's-2' },
    });
    const regenerated = await api.rest('POST', `/backend/webhooks/${hook.body.data.id}/regenerate-secret`, {
      key: owner.key,
      headers: { 'idempotency-key': 's-3' },
    });
    expect(regenerated.status).toBe(200);
    const secrets = [minted.body.data.key, hook.body.data.secret, JSON.stringify(regenerated.body).match(/whsec_[^"]+/)?.[0]];
    expect(secrets.every((s) => typeof s === 'string' && s.length > 10)).toBe(true);
    const rows = await api.db.prisma.$queryRaw<{ body: string }[]>`
      SELECT body FROM idempotency_keys WHERE tenant_id = ${owner.tenantId}::uuid AND key LIKE 's-%'`;
    expect(rows).toHaveLength(3);
    for (const s of secrets) for (const row of rows) expect(row.body).not.toContain(s);
    // A value that merely starts like a key (no valid checksum) is kept as it was.
    const lead = await api.rest('POST', '/backend/leads', {
      key: owner.key,
      body: { name: 'fnl_notakey0000000000000000000000000000AAAAAA', phone: nextPhone() },
      headers: { 'idempotency-key': 's-4' },
    });
    const replay = await api.rest('POST', '/backend/leads', {
      key: owner.key,
      body: { name: 'fnl_notakey0000000000000000000000000000AAAAAA', phone: lead.body.data.phone },
      headers: { 'idempotency-key': 's-4' },
    });
    expect(replay.body).toEqual(lead.body);
  });
});

/** A value of an input type, enough for the mutation to be valid GraphQL (the resolver may still refuse it). */
function sample(type: GraphQLInputType, depth = 0): string {
  if (isNonNullType(type)) return sample(type.ofType, depth);
  if (isListType(type)) return `[${sample(type.ofType, depth)}]`;
  const named = getNamedType(type);
  if (isEnumType(named)) return named.getValues()[0].name;
  if (isInputObjectType(named)) {
    const fields = Object.values(named.getFields()).filter((f) => isNonNullType(f.type) && f.defaultValue === undefined);
    return `{${fields.map((f) => `${f.name}: ${depth > 4 ? 'null' : sample(f.type, depth + 1)}`).join(', ')}}`;
  }
  if (isScalarType(named)) {
    const byName: Record<string, string> = {
      Int: '1',
      Float: '1',
      Boolean: 'true',
      ID: JSON.stringify(randomUUID()),
      UUID: JSON.stringify(randomUUID()),
      DateTime: '"2026-01-01T00:00:00Z"',
      JSON: '{}',
      JSONObject: '{}',
      Upload: 'null',
    };
    return byName[named.name] ?? '"x"';
  }
  return 'null';
}

const required = (args: readonly GraphQLArgument[]) => args.filter((a) => isNonNullType(a.type) && a.defaultValue === undefined);
const mutations = Object.values(schema.getMutationType()!.getFields())
  .filter((f) => f.name !== 'createTenant' && !required(f.args).some((a) => getNamedType(a.type).name === 'Upload'))
  .map((f) => {
    const args = required(f.args).map((a) => `${a.name}: ${sample(a.type)}`);
    return `mutation { ${f.name}${args.length ? `(${args.join(', ')})` : ''} { __typename } }`;
  });

describe('Idempotency-Key records are the caller’s (GraphQL)', () => {
  it('no mutation replays one caller’s answer to another, either way round', async () => {
    const { owner, narrowed, other } = await callers();
    expect(mutations.length).toBeGreaterThan(30);
    for (const sequence of [
      [owner, narrowed, other],
      [narrowed, owner, other],
    ]) {
      for (const query of mutations) {
        const key = `gql-${randomUUID()}`;
        const send = (org: Org) =>
          api.raw('/graphql', {
            method: 'POST',
            headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json', 'idempotency-key': key },
            body: JSON.stringify({ query }),
          });
        const answers = [];
        for (const caller of sequence) answers.push(await send(caller));
        expect(answers.map(replayed), query).toEqual([false, false, false]);
      }
    }
  });

  it('a narrowed key resending the owner’s createApiKey gets FORBIDDEN, and the owner’s replay has no key', async () => {
    const { owner, narrowed } = await callers();
    const query = 'mutation { createApiKey(name: "gql") { id key } }';
    const send = (org: Org) =>
      api.raw('/graphql', {
        method: 'POST',
        headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json', 'idempotency-key': 'gql-mint' },
        body: JSON.stringify({ query }),
      });
    const first = await (await send(owner)).json();
    expect(first.data.createApiKey.key).toMatch(/^fnl_/);
    const stolen = await send(narrowed);
    const stolenText = await stolen.text();
    expect(replayed(stolen)).toBe(false);
    expect(stolenText).not.toContain(first.data.createApiKey.key);
    expect(JSON.parse(stolenText).errors[0].extensions.code).toBe('FORBIDDEN');
    const retry = await send(owner);
    expect(replayed(retry)).toBe(true);
    expect(await retry.json()).toEqual({ data: { createApiKey: { id: first.data.createApiKey.id, key: null } } });
  });
});
