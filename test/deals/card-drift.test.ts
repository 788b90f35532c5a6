// The deal card's two writers agree on every field: a deal whose every column (and its lead's, lines',
// tags', todo counts') holds a distinct non-null value reads byte for byte the same through the JSON
// path (the list, the event payload) and through the resolvers (GraphQL execution, the REST read). A
// field's SQL that drifts from its resolver (card.ts) fails here.
import { execute, parse } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { authenticate } from '../../src/auth/authenticate.js';
import { createContext } from '../../src/context/context.js';
import { schema } from '../../src/domains/index.js';
import { dealSnapshots } from '../../src/domains/deals/payload.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { makeDeal, makeLead, makePipeline, makeProduct, makeStatus, makeTag, type PipelineFixture } from '../helpers/factories.js';

const api = useTestApp();

let org: Org;
let p: PipelineFixture;
let dealId: string;

/** Every field of a REST deal card, as a GraphQL selection, written out here (not derived from card.ts). */
const CARD = `id number pipeline_id stage_id lead_id owner_id value total origin loss_reason note won_at lost_at stage_entered_at created_at updated_at
  lead_name lead_surname lead_company lead_email lead_phone lead_avatar lead_status_id
  products { id product_id name price qty custom total } tags { id name color created_at updated_at } pending_todos overdue_todos`;

/** What graphql-js and the resolvers answer, without the JSON path. */
async function resolved(query: string, variables: Record<string, unknown>) {
  const viewer = await authenticate(api.db.prisma, `Bearer ${org.key}`);
  const contextValue = createContext(api.app.deps, { viewer, requestId: 'drift' });
  const result = await execute({ schema, document: parse(query), contextValue, variableValues: variables });
  expect(result.errors).toBeUndefined();
  return result.data as Record<string, any>;
}

const at = (iso: string) => new Date(iso);

beforeAll(async () => {
  org = await api.newOrg();
  p = await makePipeline(api, org);
  const status = await makeStatus(api, org);
  const tags = [await makeTag(api, org, 'Ômega', '#112233'), await makeTag(api, org, 'alfa', '#445566')];
  const product = await makeProduct(api, org, 'Licença', 1234.56);
  const lead = await makeLead(api, org, { name: 'Ana "A" \\ Ñ', company: 'ACME Ltda', email: 'ana@example.com' });
  const deal = await makeDeal(api, org, {
    pipeline_id: p.id,
    stage_id: p.entrada,
    lead_id: lead.id,
    owner_id: org.userId,
    lead_status_id: status.id,
    origin: 'whatsapp',
    note: 'nota\nlinha — “2”',
    tag_ids: tags.map((t) => t.id),
    products: [
      { product_id: product.id, qty: 3 },
      { product_id: product.id, qty: 2 },
    ],
  });
  dealId = deal.id;
  const db = api.db.prisma;
  // Columns the API never fills together (won and lost, a custom line's product) are set directly.
  await db.lead.update({
    where: { tenant_id_id: { tenant_id: org.tenantId, id: lead.id } },
    data: { surname: 'Souza', avatar_url: 'https://cdn.example.com/a/ana.png' },
  });
  await db.deal.update({
    where: { tenant_id_id: { tenant_id: org.tenantId, id: dealId } },
    data: {
      number: 4242,
      value: 98.76,
      loss_reason: 'Preço alto',
      won_at: at('2025-01-02T03:04:05.006Z'),
      lost_at: at('2025-02-03T04:05:06.007Z'),
      stage_entered_at: at('2025-03-04T05:06:07.008Z'),
      created_at: at('2024-12-01T00:00:00.123Z'),
      updated_at: at('2025-04-05T06:07:08.009Z'),
    },
  });
  const lines = await db.dealProduct.findMany({ where: { deal_id: dealId }, orderBy: { position: 'asc' } });
  await db.dealProduct.update({
    where: { tenant_id_id: { tenant_id: org.tenantId, id: lines[1].id } },
    data: { name: 'Ajuste', price: 0.1, custom: true },
  });
  for (const [i, t] of tags.entries()) {
    await db.tag.update({
      where: { tenant_id_id: { tenant_id: org.tenantId, id: t.id } },
      data: { created_at: at(`2024-0${i + 1}-10T10:10:10.010Z`), updated_at: at(`2024-0${i + 1}-20T20:20:20.020Z`) },
    });
  }
  const DAY = 86_400_000;
  for (const [title, due] of [
    ['atrasada 1', -DAY],
    ['atrasada 2', -2 * DAY],
    ['futura', DAY],
    ['sem data', null],
  ] as const) {
    await db.activity.create({
      data: { tenant_id: org.tenantId, deal_id: dealId, title, due_at: due === null ? null : new Date(Date.now() + due) },
    });
  }
});

describe('deal card drift', () => {
  it('the fixture fills every field of the card with a distinct non-null value', async () => {
    const card = (await api.rest('GET', `/backend/pipeline/deals/${dealId}`, { key: org.key })).body;
    const leaves: unknown[] = [];
    const walk = (value: unknown, path: string) => {
      expect(value, path).not.toBeNull();
      if (Array.isArray(value)) {
        expect(value.length, path).toBeGreaterThan(0);
        value.forEach((v, i) => walk(v, `${path}[${i}]`));
      } else if (value && typeof value === 'object') Object.entries(value).forEach(([k, v]) => walk(v, `${path}.${k}`));
      else leaves.push(value);
    };
    walk(card, 'deal');
    expect(Object.keys(card)).toEqual(
      CARD.replace(/\{[^}]*\}/g, '')
        .split(/\s+/)
        .filter(Boolean),
    );
    // Distinct: no two fields could be swapped unnoticed (booleans and the line's shared product id aside).
    const scalars = Object.values(card).filter((v) => typeof v !== 'object' && typeof v !== 'boolean');
    expect(new Set(scalars).size).toBe(scalars.length);
    expect(card).toMatchObject({
      lead_avatar: 'https://cdn.example.com/a/ana.png',
      lead_surname: 'Souza',
      pending_todos: 4,
      overdue_todos: 2,
      number: 4242,
    });
    expect(card.products.map((l: any) => [l.custom, l.price, l.qty, l.total])).toEqual([
      [false, 1234.56, 3, 3703.68],
      [true, 0.1, 2, 0.2],
    ]);
  });

  it('the JSON path (list and event payload) writes byte for byte what the resolvers write', async () => {
    // The list, served as JSON by PostgreSQL, against graphql-js executing the resolvers.
    const list = await api.raw(`/backend/pipelines/${p.id}/deals`, { headers: { authorization: `Bearer ${org.key}` } });
    expect(list.status).toBe(200);
    const listText = await list.text();
    const page = await resolved(`query ($id: UUID!) { pipelineDeals(id: $id) { data { ${CARD} } } }`, { id: p.id });
    expect(JSON.parse(listText).data).toHaveLength(1);
    expect(listText.slice(0, listText.indexOf(',"pagination":')) + '}').toBe(JSON.stringify(page.pipelineDeals));
    // The event payload: the REST read's selection on the JSON path, against the resolvers and the REST read.
    const one = await resolved(`query ($id: UUID!) { deal(id: $id) { ${CARD} } }`, { id: dealId });
    const [snapshot] = (await dealSnapshots(api.app.deps.tenants.for(org.tenantId), [dealId])).values();
    expect(JSON.stringify(snapshot.payload)).toBe(JSON.stringify(one.deal));
    const rest = await api.raw(`/backend/pipeline/deals/${dealId}`, { headers: { authorization: `Bearer ${org.key}` } });
    expect(await rest.text()).toBe(JSON.stringify(snapshot.payload));
  });

  it('the extras the resolvers read come with the snapshot a write answers from', async () => {
    const [snapshot] = (await dealSnapshots(api.app.deps.tenants.for(org.tenantId), [dealId])).values();
    expect(snapshot.extras?.lead?.avatar_url).toBe('https://cdn.example.com/a/ana.png');
    expect(snapshot.extras?.products.map((l) => l.price.toString())).toEqual(['1234.56', '0.1']);
    expect(snapshot.extras?.tags.map((t) => t.created_at.toISOString())).toEqual(
      expect.arrayContaining(['2024-01-10T10:10:10.010Z', '2024-02-10T10:10:10.010Z']),
    );
  });
});
