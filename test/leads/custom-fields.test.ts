// custom_fields (decisions.md "Input rules that hold on every route"): a flat object of at most 100 keys
// matching ^[A-Za-z0-9_]{1,64}$, with string (≤ 2,000 characters), number, boolean or null values.
// Anything else is 400 VALIDATION_ERROR on create and update, over REST and GraphQL, never a 500.
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { makeLead, nextPhone } from '../helpers/factories.js';

const api = useTestApp();

// The error names the field (or the key inside it) that was wrong.
const INVALID = {
  success: false,
  error: {
    code: 'VALIDATION_ERROR',
    message: expect.any(String),
    details: [{ field: expect.stringMatching(/^custom_fields/), message: expect.any(String) }],
  },
};

const deep = (depth: number): unknown => (depth === 0 ? 'fundo' : { a: deep(depth - 1) });
const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));

const refused: [string, unknown][] = [
  ['an array', [1, 2]],
  ['a string', 'x'],
  ['a nested object', { endereco: { rua: 'A' } }],
  ['nested ~128 deep', deep(128)],
  ['an array value', { tags: ['a', 'b'] }],
  ['101 keys', keys(101)],
  ['an empty key', { '': 1 }],
  ['a key with a space', { 'meu campo': 1 }],
  ['a key with an accent', { preço: 1 }],
  ['a 65-character key', { ['k'.repeat(65)]: 1 }],
  ['a 2,001-character string', { nota: 'x'.repeat(2001) }],
  ['a 9 MB string', { nota: 'x'.repeat(9 * 1024 * 1024) }],
  ['a NUL character', { nota: 'a\u0000b' }],
  ['an unpaired surrogate', { nota: 'a\ud800b' }],
  ['a lone low surrogate', { nota: '\udc00' }],
];

const accepted = {
  plano: 'pro',
  emoji: 'ok 👍',
  seats: 5,
  ratio: 0.5,
  ativo: false,
  vazio: null,
  Codigo_2: 'x'.repeat(2000),
  ['k'.repeat(64)]: 1,
};

describe('custom_fields', () => {
  it('accepts a flat object of strings, numbers, booleans and nulls, up to 100 keys, on create and update', async () => {
    const org = await api.newOrg();
    const created = await api.rest('POST', '/backend/leads', {
      key: org.key,
      body: { name: 'A', phone: nextPhone(), custom_fields: accepted },
    });
    expect(created.status, JSON.stringify(created.body).slice(0, 300)).toBe(200);
    expect(created.body.data.custom_fields).toEqual(accepted);
    const updated = await api.rest('PUT', `/backend/leads/${created.body.data.id}`, { key: org.key, body: { custom_fields: keys(100) } });
    expect(updated.status).toBe(200);
    expect(updated.body.data.custom_fields).toEqual(keys(100));
    const cleared = await api.rest('PUT', `/backend/leads/${created.body.data.id}`, { key: org.key, body: { custom_fields: null } });
    expect(cleared.body.data.custom_fields).toEqual({});
  });

  it('refuses anything else with 400 on create and update, and stores nothing', async () => {
    const org = await api.newOrg();
    const lead = await makeLead(api, org);
    await api.rest('PUT', `/backend/leads/${lead.id}`, { key: org.key, body: { custom_fields: { antes: 1 } } });
    for (const [name, custom_fields] of refused) {
      const create = await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'B', phone: nextPhone(), custom_fields } });
      expect(create.status, `create: ${name}`).toBe(400);
      expect(create.body, `create: ${name}`).toEqual(INVALID);
      const update = await api.rest('PUT', `/backend/leads/${lead.id}`, { key: org.key, body: { custom_fields } });
      expect(update.status, `update: ${name}`).toBe(400);
      expect(update.body, `update: ${name}`).toEqual(INVALID);
    }
    expect(await api.db.prisma.lead.count({ where: { tenant_id: org.tenantId } })).toBe(1);
    expect((await api.db.prisma.lead.findFirstOrThrow({ where: { id: lead.id } })).custom_fields).toEqual({ antes: 1 });
  });

  it('refuses the same over GraphQL with INVALID_INPUT', async () => {
    const org = await api.newOrg();
    for (const [name, custom_fields] of refused.filter(([n]) => n !== 'a 9 MB string')) {
      const r = await api.raw('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
        body: JSON.stringify({
          query: 'mutation($cf: JSONObject) { createLead(name: "C", phone: "+5511988887777", custom_fields: $cf) { id } }',
          variables: { cf: custom_fields },
        }),
      });
      const body = await r.json();
      expect(body.errors?.[0]?.extensions, name).toMatchObject({ code: 'INVALID_INPUT', status: 400 });
    }
    expect(await api.db.prisma.lead.count({ where: { tenant_id: org.tenantId } })).toBe(0);
  });
});
