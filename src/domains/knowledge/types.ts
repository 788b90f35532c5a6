// GraphQL types of the knowledge base: Assistant, KnowledgeItem and search hits. The graph adds
// Assistant.knowledge (a connection over what the assistant sees), Assistant.search and KnowledgeItem.assistant.
import { queryFromInfo } from '@pothos/plugin-prisma';
import type { KnowledgeItem as KnowledgeItemRow } from '../../generated/prisma/client.js';
import { builder, GRAPH_ONLY } from '../../schema/builder.js';
import { composeContent, NEWEST_FIRST } from './items.js';
import { visibleTo } from './scope.js';
import { countIfSelected, visibleItemCounts } from './counts.js';
import { searchKnowledge, type SearchHit } from './search.js';

export const Assistant = builder.prismaObject('Assistant', {
  description: 'An automated agent that answers customers using the knowledge items it sees.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    name: t.exposeString('name', { description: '1 to 255 characters.' }),
    instructions: t.exposeString('instructions', {
      nullable: true,
      description: 'How the assistant should behave; up to 20,000 characters.',
    }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    updated_at: t.expose('updated_at', { type: 'DateTime' }),
  }),
});

export const KnowledgeItem = builder.prismaObject('KnowledgeItem', {
  description: 'A knowledge item: global (every assistant but the excluded ones sees it) or exclusive to one assistant.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    tenant_id: t.expose('tenant_id', { type: 'UUID' }),
    name: t.exposeString('name', { description: '1 to 255 characters.' }),
    description: t.exposeString('description', { description: 'Up to 1000 characters; "" when none.' }),
    content: t.string({
      description: 'Indexed text: the typed text, then (after a blank line) the text extracted from the file.',
      select: { typed_text: true, file_text: true },
      resolve: (item) => composeContent(item),
    }),
    source_url: t.exposeString('source_url', { nullable: true, description: 'Where the content comes from (http or https URL).' }),
    usage_instruction: t.exposeString('usage_instruction', {
      nullable: true,
      description: 'Tells the assistant when to use the item; up to 2000 characters.',
    }),
    assistant_id: t.expose('assistant_id', {
      type: 'UUID',
      nullable: true,
      description: 'Null: global. Otherwise the only assistant that sees the item.',
    }),
    excluded_assistant_ids: t.field({
      type: ['UUID'],
      description: 'Assistants that do not see this global item, by id.',
      select: { exclusions: { select: { assistant_id: true }, orderBy: { assistant_id: 'asc' } } },
      resolve: (item) => item.exclusions.map((e) => e.assistant_id),
    }),
    file_name: t.exposeString('file_name', { nullable: true, description: 'Name of the item’s file, when it has one.' }),
    file_type: t.exposeString('file_type', { nullable: true, description: 'MIME type of the item’s file, when it has one.' }),
    file_size: t.exposeInt('file_size', { nullable: true, description: 'Size of the item’s file in bytes, when it has one.' }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    updated_at: t.expose('updated_at', { type: 'DateTime' }),
    assistant: t.relation('assistant', { nullable: true, extensions: GRAPH_ONLY, description: 'The assistant of an exclusive item.' }),
  }),
});

export const KnowledgeSearchHit = builder.objectRef<SearchHit<KnowledgeItemRow>>('KnowledgeSearchHit').implement({
  description: 'A search result: the item, its relevance and the passage that matched.',
  fields: (t) => ({
    item: t.field({ type: KnowledgeItem, resolve: (hit) => hit.item }),
    score: t.exposeFloat('score', {
      description: 'Relevance from 0 to 1 (ts_rank_cd; name weighs more than description, description more than content).',
    }),
    snippet: t.exposeString('snippet', {
      description:
        'Passages of description and content around the matches, as HTML: the text escaped, the matched words in <mark>…</mark>.',
    }),
  }),
});

/** The search arguments shared by Query.searchKnowledge and Assistant.search. */
export const searchArgs = builder.args((t) => ({
  // Not String! in the schema: a caller without knowledge.view is refused (403) before its input is read.
  q: t.string({
    description:
      'Required. Words to find (accents and case ignored, inflections matched); "a phrase" in quotes, OR, -word to exclude, prefix* for a prefix.',
  }),
  limit: t.int({ description: '1 to 50, default 10; out of range falls back to 10.' }),
}));

/** The selection of the hits' `item`, for the one query that loads them. */
export const hitItemQuery = (ctx: object, info: Parameters<typeof queryFromInfo>[0]['info']) =>
  queryFromInfo({ context: ctx, info, path: ['item'] });

builder.prismaObjectFields('Assistant', (t) => ({
  knowledge: t.prismaConnection({
    type: KnowledgeItem,
    cursor: 'id',
    extensions: GRAPH_ONLY,
    description: 'Items this assistant sees: global items minus its exclusions, plus its exclusive items; newest first.',
    totalCount: (assistant, _args, ctx) => visibleItemCounts(ctx).load(assistant.id),
    resolve: (query, assistant, _args, ctx, info) => {
      countIfSelected(ctx, assistant.id, info);
      return ctx.db.knowledgeItem.findMany({ ...query, where: visibleTo(assistant.id), orderBy: NEWEST_FIRST });
    },
  }),
  search: t.field({
    type: [KnowledgeSearchHit],
    extensions: GRAPH_ONLY,
    description: 'Ranked full-text search over the items this assistant sees.',
    args: searchArgs,
    resolve: (assistant, args, ctx, info) => searchKnowledge(ctx, { ...args, assistant_id: assistant.id }, hitItemQuery(ctx, info)),
  }),
}));
