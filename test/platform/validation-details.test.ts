// Validation errors name what was wrong (decisions.md "What integrations rely on"): `details: [{field,
// message}]` with `field` a JSON path, in the bare and envelope shapes and in GraphQL's
// `extensions.details`, for type errors (REST bodies are typed like GraphQL variables) and for the
// services' own rules; GraphQL messages carry the "Entrada inválida:" prefix once.
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { makeOrgWithPipeline } from '../helpers/factories.js';

const api = useTestApp();

const detail = (field: string) => ({ field, message: expect.any(String) });

async function graphql(key: string, query: string, variables: Record<string, unknown> = {}) {
  const r = await api.raw('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query, variables }),
  });
  return { status: r.status, body: await r.json() };
}

describe('validation details on REST', () => {
  it('envelope: a body value of the wrong type, and a service rule, name their field', async () => {
    const { org } = await makeOrgWithPipeline(api);
    const typed = await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 42, phone: '+5511987650001' } });
    expect(typed.status).toBe(400);
    expect(typed.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [detail('name')] });
    const rule = await api.rest('POST', '/backend/leads', {
      key: org.key,
      body: { name: 'Ana', phone: '+5511987650001', email: 'not-an-email' },
    });
    expect(rule.status).toBe(400);
    expect(rule.body.error.details).toEqual([detail('email')]);
  });

  it('bare: a nested value gets its JSON path (products[2].qty), for types and for rules', async () => {
    const { org, p, lead } = await makeOrgWithPipeline(api);
    const line = { name: 'Linha', price: 1, qty: 1 };
    const typed = await api.rest('POST', '/backend/pipeline/deals', {
      key: org.key,
      body: { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id, products: [line, line, { ...line, qty: 'dois' }] },
    });
    expect(typed.status).toBe(400);
    expect(typed.body).toMatchObject({ code: 'ERR_INVALID_INPUT', details: [detail('products[2].qty')] });
    const rule = await api.rest('POST', '/backend/pipeline/deals', {
      key: org.key,
      body: { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id, products: [line, { ...line, price: -5 }] },
    });
    expect(rule.status).toBe(400);
    expect(rule.body.details).toEqual([detail('products[1].price')]);
    // A list given as a single value is refused at its path.
    const shape = await api.rest('POST', '/backend/pipeline/deals', {
      key: org.key,
      body: { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id, tag_ids: 'x' },
    });
    expect(shape.body.details).toEqual([detail('tag_ids')]);
    // A query parameter too.
    const query = await api.rest('GET', `/backend/pipelines/${p.id}/deals?limit=abc`, { key: org.key });
    expect(query.status).toBe(400);
    expect(query.body.details).toEqual([detail('limit')]);
  });
});

describe('validation details on GraphQL', () => {
  const createLead =
    'mutation ($name: String!, $phone: String!, $email: String) { createLead(name: $name, phone: $phone, email: $email) { id } }';

  it('a variable of the wrong type: extensions.details names it, the message is prefixed once', async () => {
    const { org } = await makeOrgWithPipeline(api);
    const r = await graphql(org.key, createLead, { name: 42, phone: '+5511987650002' });
    expect(r.status).toBe(400);
    const [error] = r.body.errors;
    expect(error.extensions).toMatchObject({ code: 'INVALID_INPUT', details: [detail('name')] });
    expect(error.message.match(/Entrada inválida/g)).toHaveLength(1);
    const missing = await graphql(org.key, createLead, { name: 'Ana' });
    expect(missing.body.errors[0].extensions.details).toEqual([detail('phone')]);
  });

  it('a nested variable value gets its path; a service rule its field', async () => {
    const { org, p, lead } = await makeOrgWithPipeline(api);
    const createDeal = `mutation ($products: [DealProductInput!]) { createDeal(pipeline_id: "${p.id}", stage_id: "${p.entrada}", lead_id: "${lead.id}", products: $products) { id } }`;
    const typed = await graphql(org.key, createDeal, {
      products: [
        { name: 'a', qty: 1 },
        { name: 'b', qty: 1.5 },
      ],
    });
    expect(typed.body.errors[0].extensions.details).toEqual([detail('products[1].qty')]);
    const rule = await graphql(org.key, createLead, { name: 'Ana', phone: '+5511987650003', email: 'nope' });
    expect(rule.body.errors[0].extensions).toMatchObject({ code: 'INVALID_INPUT', details: [detail('email')] });
  });

  it('a literal argument the validation refuses: extensions.details names the argument and the path inside it', async () => {
    const { org, p, lead } = await makeOrgWithPipeline(api);
    const literal = await graphql(org.key, 'mutation { createLead(name: 42, phone: "+5511987650004") { id } }');
    expect(literal.status).toBe(400);
    expect(literal.body.errors).toHaveLength(1);
    expect(literal.body.errors[0].extensions).toMatchObject({ code: 'INVALID_INPUT', details: [detail('name')] });
    expect(literal.body.errors[0].message.match(/Entrada inválida/g)).toHaveLength(1);
    const nested = await graphql(
      org.key,
      `mutation { createDeal(pipeline_id: "${p.id}", stage_id: "${p.entrada}", lead_id: "${lead.id}", products: [{name: "a", qty: 1}, {name: "b", qty: 1.5}]) { id } }`,
    );
    expect(nested.body.errors[0].extensions.details).toEqual([detail('products[1].qty')]);
    // A scalar's own refusal (UUID), on a root field and on a nested field's argument.
    expect((await graphql(org.key, '{ lead(id: "nope") { id } }')).body.errors[0].extensions.details).toEqual([detail('id')]);
    const inner = await graphql(org.key, `{ pipeline(id: "${p.id}") { stages { deals(first: "x") { totalCount } } } }`);
    expect(inner.status).toBe(400);
    expect(inner.body.errors[0].extensions.details).toEqual([detail('first')]);
    // No rows were written by the refused mutations.
    expect(await api.db.prisma.lead.count({ where: { tenant_id: org.tenantId, phone: '+5511987650004' } })).toBe(0);
  });

  it('a document error is prefixed once (no "Entrada inválida: Entrada inválida:")', async () => {
    const { org } = await makeOrgWithPipeline(api);
    const r = await graphql(org.key, '{ leads { nope } }');
    expect(r.status).toBe(400);
    expect(r.body.errors[0].message).toMatch(/^Entrada inválida: (?!Entrada inválida)/);
  });
});
