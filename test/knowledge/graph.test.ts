// The knowledge base on /graphql: the same operations, Assistant.knowledge (a cursor connection over what
// the assistant sees), Assistant.search, KnowledgeItem.assistant, and a file sent per the GraphQL
// multipart request specification.
import { describe, expect, it } from 'vitest';
import { graphql } from '../gql/index.js';
import { useTestApp } from '../helpers/app.js';
import { makeAssistant, makeItem } from './helpers.js';

const api = useTestApp();

const AssistantGraphGql = graphql(`
  query AssistantGraphGql($id: UUID!, $first: Int, $after: String, $q: String!) {
    assistant(id: $id) {
      name
      knowledge(first: $first, after: $after) {
        edges {
          node {
            name
            assistant_id
            assistant {
              name
            }
          }
        }
        pageInfo {
          hasNextPage
          endCursor
        }
      }
      search(q: $q) {
        score
        snippet
        item {
          name
          excluded_assistant_ids
        }
      }
    }
  }
`);

const SearchGql = graphql(`
  query SearchGql($q: String!, $assistant_id: UUID, $limit: Int) {
    searchKnowledge(q: $q, assistant_id: $assistant_id, limit: $limit) {
      score
      snippet
      item {
        id
        name
        content
        excluded_assistant_ids
        assistant {
          id
          name
        }
      }
    }
  }
`);

const WriteGql = graphql(`
  mutation WriteGql($name: String!, $assistant_id: String) {
    createKnowledgeItem(name: $name, content: "Política de frete grátis", assistant_id: $assistant_id) {
      id
      name
      assistant_id
    }
  }
`);

const ExclusionsGql = graphql(`
  mutation ExclusionsGql($id: UUID!, $assistant_ids: [UUID!]!) {
    setKnowledgeExclusions(id: $id, assistant_ids: $assistant_ids) {
      excluded_assistant_ids
    }
  }
`);

describe('knowledge on GraphQL', () => {
  it('Assistant.knowledge pages through what the assistant sees; Assistant.search searches it', async () => {
    const org = await api.newOrg();
    const a = await makeAssistant(api, org, 'A');
    const b = await makeAssistant(api, org, 'B');
    await makeItem(api, org, { name: 'Global 1', content: 'frete para todo o Brasil' });
    const hidden = await makeItem(api, org, { name: 'Global sem A', content: 'frete internacional' });
    await api.rest('POST', `/backend/knowledge/${hidden.id}/exclusions/${a.id}`, { key: org.key });
    await makeItem(api, org, { name: 'Só A', content: 'frete da loja A', assistant_id: a.id });
    await makeItem(api, org, { name: 'Só B', content: 'frete da loja B', assistant_id: b.id });
    await makeItem(api, org, { name: 'Global 2', content: 'troca de produtos' });

    const first = await api.gql(AssistantGraphGql, { id: a.id, first: 2, q: 'frete' }, org.key);
    expect(first.errors).toBeUndefined();
    const assistant = first.data!.assistant;
    expect(assistant.knowledge.edges.map((e) => [e.node.name, e.node.assistant?.name ?? null])).toEqual([
      ['Global 2', null],
      ['Só A', 'A'],
    ]);
    expect(assistant.knowledge.pageInfo.hasNextPage).toBe(true);
    expect(assistant.search.map((h) => h.item.name).sort()).toEqual(['Global 1', 'Só A']);
    expect(assistant.search[0].snippet).toContain('<mark>frete</mark>');

    const rest = await api.gql(
      AssistantGraphGql,
      { id: a.id, first: 2, after: assistant.knowledge.pageInfo.endCursor, q: 'internacional' },
      org.key,
    );
    expect(rest.data!.assistant.knowledge.edges.map((e) => e.node.name)).toEqual(['Global 1']);
    expect(rest.data!.assistant.knowledge.pageInfo.hasNextPage).toBe(false);
    expect(rest.data!.assistant.search).toEqual([]);
  });

  it('searchKnowledge loads the hits’ items and their relations in a fixed number of statements', async () => {
    const org = await api.newOrg();
    const a = await makeAssistant(api, org, 'A');
    for (let i = 0; i < 8; i++)
      await makeItem(api, org, { name: `Boleto ${i}`, content: 'pagamento por boleto', assistant_id: i % 2 ? a.id : '' });
    const result = await api.gql(SearchGql, { q: 'boleto', limit: 20 }, org.key);
    expect(result.errors).toBeUndefined();
    expect(result.data!.searchKnowledge).toHaveLength(8);
    expect(result.data!.searchKnowledge.filter((h) => h.item.assistant?.name === 'A')).toHaveLength(4);
    const statements = await api.countStatements(() => api.gql(SearchGql, { q: 'boleto', limit: 20 }, org.key));
    // Key lookup, the search, the items, their exclusions, their assistants.
    expect(statements).toBeLessThanOrEqual(5);
  });

  it('mutations answer like REST: errors carry the same codes', async () => {
    const org = await api.newOrg();
    const a = await makeAssistant(api, org);
    const created = await api.gql(WriteGql, { name: 'Frete', assistant_id: '' }, org.key);
    expect(created.data!.createKnowledgeItem).toMatchObject({ name: 'Frete', assistant_id: null });
    const set = await api.gql(ExclusionsGql, { id: created.data!.createKnowledgeItem.id, assistant_ids: [a.id] }, org.key);
    expect(set.data!.setKnowledgeExclusions.excluded_assistant_ids).toEqual([a.id]);

    const tooLong = await api.gql(WriteGql, { name: 'x'.repeat(256) }, org.key);
    expect(tooLong.errors![0].extensions).toMatchObject({ code: 'INVALID_INPUT', status: 400 });
    const foreign = await api.gql(WriteGql, { name: 'x', assistant_id: (await makeAssistant(api, await api.newOrg('Outra'))).id }, org.key);
    expect(foreign.errors![0].extensions).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    const exclusive = await api.gql(WriteGql, { name: 'Exclusivo', assistant_id: a.id }, org.key);
    const conflict = await api.gql(ExclusionsGql, { id: exclusive.data!.createKnowledgeItem.id, assistant_ids: [] }, org.key);
    expect(conflict.errors![0].extensions).toMatchObject({ code: 'CONFLICT', status: 409 });
    const operator = await api.keyFor(org, 'operator');
    expect((await api.gql(WriteGql, { name: 'x' }, operator)).errors![0].extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    expect((await api.gql(SearchGql, { q: 'frete' }, operator)).data!.searchKnowledge).toHaveLength(2);
  });

  it('takes a file per the GraphQL multipart request specification', async () => {
    const org = await api.newOrg();
    const body = new FormData();
    body.set(
      'operations',
      JSON.stringify({
        query:
          'mutation($file: File!) { createKnowledgeItem(name: "Manual", content: "Leia antes.", file: $file) { content file_name file_type file_size } }',
        variables: { file: null },
      }),
    );
    body.set('map', JSON.stringify({ 0: ['variables.file'] }));
    const markdown = '# Manual\n\nGarantia de **um ano**.';
    body.set('0', new File([markdown], 'manual.md'));
    const r = await api.raw('/graphql', { method: 'POST', headers: { authorization: `Bearer ${org.key}` }, body });
    const json = await r.json();
    expect(json.errors).toBeUndefined();
    expect(json.data.createKnowledgeItem).toEqual({
      content: 'Leia antes.\n\nManual\n\nGarantia de um ano.',
      file_name: 'manual.md',
      file_type: 'text/markdown',
      file_size: Buffer.byteLength(markdown),
    });
  });

  it('answers a long file text (not read back after its write) wherever the query asks for it, and the next read agrees', async () => {
    const org = await api.newOrg();
    const text = Array.from({ length: 3_000 }, (_, i) => `${i}\t"Preço" à vista\\ 🚀 日本語\n`).join('');
    expect(text.length).toBeGreaterThan(64 * 1024);
    const body = new FormData();
    body.set(
      'operations',
      JSON.stringify({
        query:
          'mutation($file: File!) { createKnowledgeItem(name: "Tabela", content: "Antes.", file: $file) { id content again: content name } }',
        variables: { file: null },
      }),
    );
    body.set('map', JSON.stringify({ 0: ['variables.file'] }));
    body.set('0', new File([text], 'tabela.txt'));
    const r = await api.raw('/graphql', { method: 'POST', headers: { authorization: `Bearer ${org.key}` }, body });
    expect(r.status).toBe(200);
    const raw = await r.text();
    expect(Number(r.headers.get('content-length') ?? Buffer.byteLength(raw))).toBe(Buffer.byteLength(raw));
    const json = JSON.parse(raw);
    expect(json.errors).toBeUndefined();
    const content = `Antes.\n\n${text.trim()}`;
    expect(json.data.createKnowledgeItem).toMatchObject({ content, again: content, name: 'Tabela' });
    const read = await api.raw('/graphql', {
      method: 'POST',
      headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        query: 'query ($id: UUID!) { knowledgeItem(id: $id) { content } }',
        variables: { id: json.data.createKnowledgeItem.id },
      }),
    });
    expect((await read.json()).data.knowledgeItem.content).toBe(content);
  });
});
