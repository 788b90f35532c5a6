// Objects in a GraphQL answer ≤ its estimated cost, for every query (decisions.md "Bounded work"). A
// corpus generated from the schema: from every root query field whose arguments the fixture can fill,
// every chain of object fields two, three and four levels deep that crosses a list, once with the default
// page sizes and once asking for the most (`first`/`limit` 100). The data holds the capped lists at
// their caps: a lead and a deal with 100 tags, a deal with 200 lines, a pipeline with 50 stages, a
// department with 100 members; a few rows elsewhere (root lists are counted, connections paged).
// Every answer's objects (each selection asks `__typename`) are counted against the `x-graphql-cost`
// header the cost check sets; an operation over the limit must be refused (400) before it runs.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  getNamedType,
  getNullableType,
  isCompositeType,
  isListType,
  isObjectType,
  type GraphQLField,
  type GraphQLObjectType,
} from 'graphql';
import { schema } from '../../src/domains/index.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { makeDeal, makeLead, makePipeline, type PipelineFixture } from '../helpers/factories.js';
import { inbound, makeChannel, makeDepartment } from '../messaging/helpers.js';
import { makeAssistant, makeItem } from '../knowledge/helpers.js';
import { makeAssociation, makeCadence, providerTemplate, syncTemplates } from '../templates/helpers.js';

const api = useTestApp();
const MAX_COST = 50_000;

let org: Org;
const ids: Record<string, string> = {};

beforeAll(async () => {
  org = await api.newOrg();
  const p: PipelineFixture = await makePipeline(api, org);
  // 50 stages: the four of a new pipeline and 46 more, in one save.
  const stages = [...p.stages.map((s) => ({ id: s.id, name: s.name })), ...Array.from({ length: 46 }, (_, i) => ({ name: `Etapa ${i}` }))];
  expect((await api.rest('PUT', `/backend/pipelines/${p.id}`, { key: org.key, body: { name: 'Vendas', stages } })).status).toBe(200);
  // 100 tags on a lead and on a deal; the deal with 200 lines.
  await api.db.prisma.tag.createMany({
    data: Array.from({ length: 100 }, (_, i) => ({ tenant_id: org.tenantId, name: `tag${i}`, color: '#22c55e' })),
  });
  const tagIds = (await api.db.prisma.tag.findMany({ where: { tenant_id: org.tenantId }, select: { id: true } })).map((t) => t.id);
  const lead = await makeLead(api, org, { name: 'Ana' });
  expect((await api.rest('PUT', `/backend/leads/${lead.id}`, { key: org.key, body: { tag_ids: tagIds } })).status).toBe(200);
  const products = Array.from({ length: 200 }, (_, i) => ({ name: `L${i}`, price: 1, qty: 1 }));
  const deal = await makeDeal(api, org, { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id, tag_ids: tagIds, products });
  for (let i = 0; i < 2; i++) await makeDeal(api, org, { pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id, value: i });
  expect((await api.rest('POST', `/backend/pipeline/deals/${deal.id}/activities`, { key: org.key, body: { title: 'Ligar' } })).status).toBe(
    201,
  );
  // A department of 100 members.
  const department = await makeDepartment(api, org, 'Vendas');
  await api.db.prisma.user.createMany({
    data: Array.from({ length: 100 }, (_, i) => ({
      tenant_id: org.tenantId,
      name: `u${i}`,
      email: `u${i}@example.com`,
      role: 'operator' as const,
    })),
  });
  const users = await api.db.prisma.user.findMany({ where: { tenant_id: org.tenantId, email: { startsWith: 'u' } }, select: { id: true } });
  await api.db.prisma.departmentMember.createMany({
    data: users.map((u) => ({ tenant_id: org.tenantId, department_id: department.id, user_id: u.id })),
  });
  // Messaging, templates, knowledge, webhooks: a few rows each.
  const channel = await makeChannel(api, org);
  const { phone } = (await api.rest('GET', `/backend/leads/${lead.id}`, { key: org.key })).body.data;
  const { conversation } = await inbound(api, org, channel.id, phone, 'Olá');
  await inbound(api, org, channel.id, phone, 'Tudo bem?');
  const [template] = await syncTemplates(api, org, [providerTemplate('boas-vindas')]);
  const cadence = await makeCadence(api, org);
  const association = await makeAssociation(api, org, {
    cadence_id: cadence.id,
    template_id: template.id,
    parameter_mapping: { '1': '{{LEAD_NAME}}', '2': 'Acme' },
  });
  await makeAssociation(api, org, {
    cadence_id: cadence.id,
    template_id: template.id,
    step_index: 1,
    parameter_mapping: { '1': 'x', '2': 'y' },
  });
  const assistant = await makeAssistant(api, org);
  const item = await makeItem(api, org, { name: 'Preços', content: 'tabela de preços' });
  const hook = await api.rest('POST', '/backend/webhooks', {
    key: org.key,
    body: { url: 'https://example.com/hook', events: ['deal.created'] },
  });
  Object.assign(ids, {
    pipeline: p.id,
    lead: lead.id,
    deal: deal.id,
    department: department.id,
    channel: channel.id,
    conversation: conversation.id,
    template: template.id,
    cadence: cadence.id,
    association: association.id,
    assistant: assistant.id,
    item: item.id,
    webhook: hook.body.data.id,
  });
}, 120_000);

/** Arguments of the root fields the corpus starts from (a field with a required argument not here is left out). */
const rootArgs = (): Record<string, Record<string, unknown>> => ({
  lead: { id: ids.lead },
  leadMessages: { id: ids.lead },
  deal: { id: ids.deal },
  dealActivities: { id: ids.deal },
  dealHistory: { id: ids.deal },
  pipeline: { id: ids.pipeline },
  pipelineBoard: { id: ids.pipeline },
  pipelineDeals: { id: ids.pipeline },
  departmentMembers: { id: ids.department },
  channel: { id: ids.channel },
  conversation: { id: ids.conversation },
  template: { id: ids.template },
  assistant: { id: ids.assistant },
  assistantKnowledge: { id: ids.assistant },
  knowledgeItem: { id: ids.item },
  searchKnowledge: { q: 'preços' },
  webhook: { id: ids.webhook },
  webhookDeliveries: { id: ids.webhook },
  previewCadenceAssociation: { id: ids.association, lead_id: ids.lead },
});

type Field = GraphQLField<unknown, unknown>;
const composite = (f: Field) => isCompositeType(getNamedType(f.type));
const isList = (f: Field) => isListType(getNullableType(f.type));
const children = (type: GraphQLObjectType) =>
  Object.values(type.getFields()).filter((f) => composite(f) && f.args.every((a) => a.defaultValue !== undefined || !isNonNullArg(a.type)));
const isNonNullArg = (type: unknown) => String(type).endsWith('!');

/** Chains of `depth` object fields below `type`, each with at least one list among them and the root. */
function chains(type: GraphQLObjectType, depth: number): Field[][] {
  if (depth === 0) return [[]];
  return children(type).flatMap((f) => {
    const named = getNamedType(f.type);
    return isObjectType(named) ? chains(named, depth - 1).map((rest) => [f, ...rest]) : [];
  });
}

function argsText(values: Record<string, unknown>) {
  const entries = Object.entries(values);
  return entries.length ? `(${entries.map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(', ')})` : '';
}

/** `most`: ask every list for its largest page (first/limit 100). */
function sizeArgs(f: Field, most: boolean): Record<string, unknown> {
  if (!most) return {};
  const names = f.args.map((a) => a.name);
  if (names.includes('first')) return { first: 100 };
  if (names.includes('limit')) return { limit: 100 };
  return {};
}

function query(root: Field, args: Record<string, unknown>, chain: Field[], most: boolean): string {
  let selection = '__typename';
  for (const f of [...chain].reverse()) selection = `__typename ${f.name}${argsText(sizeArgs(f, most))} { ${selection} }`;
  return `{ ${root.name}${argsText({ ...args, ...sizeArgs(root, most) })} { ${selection} } }`;
}

function corpus(): string[] {
  const queries = new Set<string>();
  const known = rootArgs();
  for (const root of Object.values(schema.getQueryType()!.getFields())) {
    const named = getNamedType(root.type);
    if (!composite(root) || !isObjectType(named)) continue;
    const required = root.args.filter((a) => isNonNullArg(a.type) || a.name === 'id' || a.name === 'q').map((a) => a.name);
    const args = known[root.name] ?? {};
    if (required.some((name) => !(name in args))) continue;
    for (const depth of [2, 3, 4]) {
      for (const chain of chains(named, depth)) {
        if (!isList(root) && !chain.some(isList)) continue;
        for (const most of [false, true]) queries.add(query(root, args, chain, most));
      }
    }
  }
  return [...queries];
}

/** Objects in an answer: every object that carries __typename (every selection asks for it). */
function objects(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + objects(v), 0);
  if (!value || typeof value !== 'object') return 0;
  return ('__typename' in value ? 1 : 0) + Object.values(value).reduce((n: number, v) => n + objects(v), 0);
}

describe('GraphQL fan-out corpus', () => {
  it('every answer holds at most its estimated cost in objects; over the limit is refused before running', async () => {
    const queries = corpus();
    expect(queries.length).toBeGreaterThan(150);
    let served = 0;
    let refused = 0;
    let largest = { objects: 0, query: '' };
    const failures: string[] = [];
    for (const q of queries) {
      const r = await api.raw('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${org.key}` },
        body: JSON.stringify({ query: q }),
      });
      const body = (await r.json()) as { data?: unknown; errors?: { extensions?: { code?: string; cost?: number } }[] };
      if (r.status === 400) {
        const cost = body.errors?.[0]?.extensions?.cost;
        if (!(typeof cost === 'number' && cost > MAX_COST))
          failures.push(`refused for another reason: ${q} ${JSON.stringify(body.errors)}`);
        refused++;
        continue;
      }
      const estimate = Number(r.headers.get('x-graphql-cost'));
      const count = objects(body.data);
      if (body.errors?.some((e) => e.extensions?.code === 'INTERNAL')) failures.push(`internal error: ${q}`);
      if (!(count <= estimate)) failures.push(`${count} objects > estimate ${estimate}: ${q}`);
      if (count > largest.objects) largest = { objects: count, query: q };
      served++;
    }
    expect(failures).toEqual([]);
    // The caps were reached: some answer holds a capped list whole (100 tags, 200 lines, 100 members).
    expect(largest.objects).toBeGreaterThanOrEqual(200);
    expect(served).toBeGreaterThan(75);
    expect(refused).toBeGreaterThan(0);
  }, 600_000);
});

describe('the fan-out of issue 22', () => {
  it('1,000 cadence associations: the old unpaged shape is refused, the paged one holds at most its estimate', async () => {
    const other = await api.newOrg('Cadências');
    const [template] = await syncTemplates(api, other, [providerTemplate('muitas')]);
    const cadence = await makeCadence(api, other);
    await api.db.prisma.cadenceAssociation.createMany({
      data: Array.from({ length: 1000 }, (_, i) => ({
        tenant_id: other.tenantId,
        cadence_id: cadence.id,
        template_id: template.id,
        step_index: i,
        message_index: 0,
        parameter_mapping: { '1': 'x' },
      })),
    });
    const post = async (query: string) => {
      const r = await api.raw('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${other.key}` },
        body: JSON.stringify({ query }),
      });
      return {
        status: r.status,
        cost: Number(r.headers.get('x-graphql-cost')),
        body: (await r.json()) as { data?: unknown; errors?: unknown[] },
      };
    };
    // Once 1,000,000 objects (15 s, 3.4 GB); the list is now a connection, so this is no longer a valid query.
    expect((await post('{ cadences { associations { cadence { associations { id parameter_mapping } } } } }')).status).toBe(400);
    const paged = await post(
      '{ cadences { __typename associations(first: 100) { __typename nodes { __typename cadence { __typename associations(first: 100) { __typename nodes { __typename id parameter_mapping } } } } } } }',
    );
    expect(paged.status, JSON.stringify(paged.body.errors)).toBe(200);
    expect(objects(paged.body.data)).toBeGreaterThan(10_000);
    expect(objects(paged.body.data)).toBeLessThanOrEqual(paged.cost);
    expect(paged.cost).toBeLessThanOrEqual(MAX_COST);
  }, 120_000);
});
