// Knowledge search: ranked full-text over name, description and content; accents, inflections, phrases,
// prefixes; only what the given assistant sees; highlighted, escaped snippets; its errors; and the plan:
// the GIN index on the generated search_vector.
import { describe, expect, it } from 'vitest';
import { Prisma } from '../../src/generated/prisma/client.js';
import { searchStatement } from '../../src/domains/knowledge/search.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { ERR, INVALID_FIELD, makeAssistant, makeItem } from './helpers.js';

const api = useTestApp();

async function search(org: Org, q: string, params: Record<string, string> = {}) {
  const query = new URLSearchParams({ q, ...params });
  const r = await api.rest('GET', `/backend/knowledge/search?${query}`, { key: org.key });
  expect(r.status, `${q}: ${JSON.stringify(r.body)}`).toBe(200);
  return r.body as { item: any; score: number; snippet: string }[];
}
const names = (hits: { item: { name: string } }[]) => hits.map((h) => h.item.name);

describe('knowledge search', () => {
  it('ranks name above description above content, with scores between 0 and 1 and the whole item in each hit', async () => {
    const org = await api.newOrg();
    await makeItem(api, org, { name: 'Trocas', content: 'Como funciona a garantia estendida do produto.' });
    await makeItem(api, org, { name: 'Garantia', content: 'Prazo de doze meses.' });
    await makeItem(api, org, { name: 'Devoluções', description: 'Garantia e devolução', content: 'Devolução em sete dias.' });
    await makeItem(api, org, { name: 'Horários', content: 'Abrimos às nove.' });
    const hits = await search(org, 'garantia');
    expect(names(hits)).toEqual(['Garantia', 'Devoluções', 'Trocas']);
    expect(hits[0].score).toBeGreaterThan(hits[1].score);
    expect(hits[1].score).toBeGreaterThan(hits[2].score);
    for (const h of hits) {
      expect(h.score).toBeGreaterThan(0);
      expect(h.score).toBeLessThan(1);
    }
    expect(hits[0].item).toEqual((await api.rest('GET', `/backend/knowledge/${hits[0].item.id}`, { key: org.key })).body);
    expect(Object.keys(hits[0])).toEqual(['item', 'score', 'snippet']);
  });

  it('ignores accents and case both ways, and matches Portuguese and English inflections', async () => {
    const org = await api.newOrg();
    await makeItem(api, org, { name: 'Orçamento anual', content: 'Orçamento aprovado pela diretoria.' });
    await makeItem(api, org, { name: 'Preco sem acento', content: 'Tabela de precos atualizada.' });
    await makeItem(api, org, { name: 'Refunds', content: 'Refunds are processed within five days.' });
    expect(names(await search(org, 'orcamento'))).toEqual(['Orçamento anual']);
    expect(names(await search(org, 'ORÇAMENTO'))).toEqual(['Orçamento anual']);
    expect(names(await search(org, 'orçamentos aprovados'))).toEqual(['Orçamento anual']);
    expect(names(await search(org, 'preço'))).toEqual(['Preco sem acento']);
    expect(names(await search(org, 'refund processing'))).toEqual(['Refunds']);
    expect(await search(org, 'inexistente')).toEqual([]);
  });

  it('understands phrases, OR, -exclusions and prefix* terms', async () => {
    const org = await api.newOrg();
    await makeItem(api, org, { name: 'Frete', content: 'O prazo de entrega é de cinco dias úteis.' });
    await makeItem(api, org, { name: 'Pedidos', content: 'A entrega depende do estoque; o prazo de pagamento é de trinta dias.' });
    await makeItem(api, org, { name: 'Pagamentos', content: 'Aceitamos boleto e pix.' });
    expect(names(await search(org, '"prazo de entrega"'))).toEqual(['Frete']);
    expect(names(await search(org, 'prazo entrega')).sort()).toEqual(['Frete', 'Pedidos']);
    expect(names(await search(org, 'entrega -estoque'))).toEqual(['Frete']);
    expect(names(await search(org, 'boleto OR estoque')).sort()).toEqual(['Pagamentos', 'Pedidos']);
    expect(names(await search(org, 'pagam*')).sort()).toEqual(['Pagamentos', 'Pedidos']);
    expect(names(await search(org, 'esto*'))).toEqual(['Pedidos']);
    expect(names(await search(org, 'éntreg* cinco'))).toEqual(['Frete']);
    expect(await search(org, 'pagam')).toEqual([]);
  });

  it('with assistant_id: only what that assistant sees; without: every item of the organisation', async () => {
    const org = await api.newOrg();
    const a = await makeAssistant(api, org, 'A');
    const b = await makeAssistant(api, org, 'B');
    await makeItem(api, org, { name: 'Global', content: 'manual do cliente' });
    const hidden = await makeItem(api, org, { name: 'Global sem A', content: 'manual do revendedor' });
    await api.rest('POST', `/backend/knowledge/${hidden.id}/exclusions/${a.id}`, { key: org.key });
    await makeItem(api, org, { name: 'Só A', content: 'manual interno de A', assistant_id: a.id });
    await makeItem(api, org, { name: 'Só B', content: 'manual interno de B', assistant_id: b.id });

    expect(names(await search(org, 'manual', { assistant_id: a.id })).sort()).toEqual(['Global', 'Só A']);
    expect(names(await search(org, 'manual', { assistant_id: b.id })).sort()).toEqual(['Global', 'Global sem A', 'Só B']);
    expect(names(await search(org, 'manual')).sort()).toEqual(['Global', 'Global sem A', 'Só A', 'Só B']);
    expect(await search(org, 'revendedor', { assistant_id: a.id })).toEqual([]);
    await api.rest('DELETE', `/backend/knowledge/${hidden.id}/exclusions/${a.id}`, { key: org.key });
    expect(names(await search(org, 'revendedor', { assistant_id: a.id }))).toEqual(['Global sem A']);
  });

  it('snippets show the matched passage of the original text, matches in <mark>, everything else escaped', async () => {
    const org = await api.newOrg();
    const filler = 'Texto introdutório sem relação com a pergunta. '.repeat(40);
    await makeItem(api, org, { name: 'Longo', content: `${filler}O orçamento de 2025 prevê <10% & "reajuste" no frete. ${filler}` });
    const [hit] = await search(org, 'orcamento');
    expect(hit.snippet).toContain('<mark>orçamento</mark>');
    expect(hit.snippet).toContain('&lt;10% &amp; "reajuste"');
    expect(hit.snippet.replace(/<\/?mark>/g, '')).not.toMatch(/[<>]/);
    expect(hit.snippet.length).toBeLessThan(600);
    await makeItem(api, org, { name: 'Script', content: 'Antes <script>alert(1)</script> depois do reembolso.' });
    const [script] = await search(org, 'reembolso');
    expect(script.snippet).not.toContain('<script');
    expect(script.snippet).toContain('<mark>reembolso</mark>');
    // Only a name: the snippet is the name.
    await makeItem(api, org, { name: 'Fidelidade', content: '' });
    expect((await search(org, 'fidelidade'))[0].snippet).toBe('<mark>Fidelidade</mark>');
  });

  it('limit: the best n, 10 by default, out of range falls back to 10; bounded statements', async () => {
    const org = await api.newOrg();
    for (let i = 0; i < 12; i++) await makeItem(api, org, { name: `Catálogo ${i}`, content: 'catálogo '.repeat(i + 1) });
    expect(await search(org, 'catalogo')).toHaveLength(10);
    expect(await search(org, 'catalogo', { limit: '0' })).toHaveLength(10);
    expect(await search(org, 'catalogo', { limit: '51' })).toHaveLength(10);
    expect(await search(org, 'catalogo', { limit: '50' })).toHaveLength(12);
    const two = await search(org, 'catalogo', { limit: '2' });
    expect(two).toHaveLength(2);
    expect(two.map((h) => h.item.id)).toEqual((await search(org, 'catalogo')).slice(0, 2).map((h) => h.item.id));
    const statements = await api.countStatements(() => search(org, 'catalogo', { limit: '50' }));
    // Key lookup, the search, the items, their exclusions.
    expect(statements).toBeLessThanOrEqual(4);
  });

  it('refuses a missing, empty or long q, a bad limit or assistant id (400); an unknown assistant is 404', async () => {
    const org = await api.newOrg();
    await makeItem(api, org);
    for (const query of ['', '?q=', '?q=%20%20', `?q=${'a'.repeat(501)}`, '?q=x&limit=abc', '?q=x&assistant_id=abc']) {
      const r = await api.rest('GET', `/backend/knowledge/search${query}`, { key: org.key });
      expect(r.status, query.slice(0, 40)).toBe(400);
      expect(r.body).toEqual(INVALID_FIELD);
    }
    const r = await api.rest('GET', '/backend/knowledge/search?q=x&assistant_id=00000000-0000-4000-8000-000000000000', { key: org.key });
    expect(r.status).toBe(404);
    expect(r.body).toEqual(ERR('ERR_NOT_FOUND'));
    // Permission before input: a key without knowledge.view is refused whatever it sends.
    const narrowed = await api.keyFor(org, 'admin', ['pipeline.view']);
    for (const query of ['', '?q=x']) {
      expect((await api.rest('GET', `/backend/knowledge/search${query}`, { key: narrowed })).body).toEqual(ERR('ERR_FORBIDDEN'));
    }
    expect(await search(org, '!!! ...')).toEqual([]);
    for (const odd of [
      '\'":* & | <->',
      '*',
      '-*',
      'a* b* c*',
      'ç*',
      '2025*',
      'x_y*',
      'e-mail*',
      '😀*',
      '"frase* aberta',
      '(a | b) & !c',
      'or or',
      '- -',
    ]) {
      expect(Array.isArray(await search(org, odd)), odd).toBe(true);
    }
  });

  it('uses the GIN index on search_vector, with and without an assistant', async () => {
    const org = await api.newOrg();
    const assistant = await makeAssistant(api, org);
    await api.db.sql.query(
      `INSERT INTO knowledge_items (tenant_id, name, typed_text)
       SELECT $1::uuid, 'Item ' || i, 'texto comum de atendimento número ' || i || CASE WHEN i % 500 = 0 THEN ' raridade' ELSE '' END
         FROM generate_series(1, 3000) AS i`,
      [org.tenantId],
    );
    // VACUUM moves the bulk insert out of the GIN pending list (as autovacuum would) and ANALYZE sees the words.
    await api.db.sql.query('VACUUM ANALYZE knowledge_items');
    for (const assistantId of [null, assistant.id]) {
      const statement = searchStatement(Prisma.sql`${org.tenantId}::uuid`, { q: 'raridade', assistantId, limit: 10 });
      // On a table this small a sequential scan costs less; disabling it shows the search CAN use the index
      // (its @@ is on the indexed column with a constant tsquery), which the planner prefers on large
      // tables (the bench prints the plan it picks over 100,000 items).
      const rows = await api.db.prisma.$transaction(async (tx) => {
        await tx.$executeRawUnsafe('SET LOCAL enable_seqscan = off');
        return tx.$queryRawUnsafe<{ 'QUERY PLAN': string }[]>(`EXPLAIN ${statement.text}`, ...statement.values);
      });
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(plan, `assistant ${assistantId}`).toMatch(/Bitmap Index Scan on knowledge_items_search_vector_idx/);
      expect(plan, `assistant ${assistantId}`).not.toMatch(/Seq Scan on knowledge_items/);
    }
    expect(names(await search(org, 'raridade'))).toHaveLength(6);
    expect(names(await search(org, 'raridade', { assistant_id: assistant.id }))).toHaveLength(6);
  });
});
