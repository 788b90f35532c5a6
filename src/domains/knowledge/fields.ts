// Root fields of the knowledge base: assistants, items, exclusions and search. Reads need knowledge.view;
// item and exclusion writes knowledge.manage; assistant writes assistants.manage.
import { syncArrayArgs } from '../common/sync.js';
import { idArg } from '../common/args.js';
import { listCount } from '../../schema/list-bounds.js';
import { builder } from '../../schema/builder.js';
import { SUCCESS, Success } from '../common/types.js';
import { Assistant, hitItemQuery, KnowledgeItem, KnowledgeSearchHit, searchArgs } from './types.js';
import * as assistants from './assistants.js';
import * as items from './items.js';
import * as scope from './scope.js';
import { searchKnowledge } from './search.js';

// Assistants

builder.queryField('assistants', (t) =>
  t.prismaField({
    type: [Assistant],
    extensions: listCount('assistants'),

    description: 'The organisation’s assistants, oldest first (knowledge.view).',
    resolve: (query, _root, _args, ctx) => assistants.listAssistants(ctx, query),
  }),
);

builder.queryField('assistant', (t) =>
  t.prismaField({
    type: Assistant,
    description: 'One assistant (knowledge.view).',
    args: idArg('The assistant.'),
    resolve: (query, _root, args, ctx) => assistants.getAssistant(ctx, args.id, query),
  }),
);

builder.mutationField('createAssistant', (t) =>
  t.prismaField({
    type: Assistant,
    description: 'Creates an assistant (assistants.manage).',
    args: {
      name: t.arg.string({ required: true, description: '1 to 255 characters.' }),
      instructions: t.arg.string({ description: 'How the assistant should behave; up to 20,000 characters.' }),
    },
    resolve: (query, _root, args, ctx) => assistants.createAssistant(ctx, args, query),
  }),
);

builder.mutationField('updateAssistant', (t) =>
  t.prismaField({
    type: Assistant,
    description:
      'Renames an assistant or changes its instructions; omitted fields are unchanged, null instructions clears them (assistants.manage).',
    args: {
      ...idArg('The assistant.'),
      name: t.arg.string({ description: '1 to 255 characters.' }),
      instructions: t.arg.string({ description: 'Up to 20,000 characters; null or "" clears them.' }),
    },
    resolve: (query, _root, args, ctx) => assistants.updateAssistant(ctx, args.id, args, query),
  }),
);

builder.mutationField('deleteAssistant', (t) =>
  t.field({
    type: Success,
    description:
      'Deletes an assistant and its exclusions (assistants.manage). An assistant that still has exclusive items is a conflict (409, item_count).',
    args: idArg('The assistant.'),
    resolve: async (_root, args, ctx) => (await assistants.deleteAssistant(ctx, args.id), SUCCESS),
  }),
);

builder.queryField('assistantKnowledge', (t) =>
  t.prismaField({
    type: [KnowledgeItem],
    extensions: listCount('knowledge_items'),

    description: 'Items an assistant sees: global items minus its exclusions, plus its exclusive items; newest first (knowledge.view).',
    args: idArg('The assistant.'),
    resolve: (query, _root, args, ctx) => items.assistantItems(ctx, args.id, query),
  }),
);

// Knowledge items

builder.queryField('knowledgeItems', (t) =>
  t.prismaField({
    type: [KnowledgeItem],
    extensions: listCount('knowledge_items'),

    description:
      'Every knowledge item of the organisation, global and exclusive, newest first (knowledge.view); with `updated_since` or `cursor`, a sync page: by updated_at, id ascending.',
    args: syncArrayArgs,
    resolve: (query, _root, args, ctx) => items.listItems(ctx, args, query),
  }),
);

builder.queryField('knowledgeItem', (t) =>
  t.prismaField({
    type: KnowledgeItem,
    description: 'One knowledge item (knowledge.view).',
    args: idArg('The item.'),
    resolve: (query, _root, args, ctx) => items.getItem(ctx, args.id, query),
  }),
);

const itemArgs = (create: boolean) =>
  builder.args((t) => ({
    name: t.string({ required: create, description: '1 to 255 characters.' }),
    description: t.string({ description: 'Up to 1000 characters.' }),
    content: t.string({
      description: create
        ? 'The item’s text; with a file, additional text placed before the extracted text. Up to 2,000,000 characters.'
        : 'Replaces the typed text (the file’s text is kept). Up to 2,000,000 characters.',
    }),
    usage_instruction: t.string({ description: 'When the assistant should use the item; up to 2000 characters.' }),
    source_url: t.string({ description: 'Where the content comes from (http or https URL); null or "" clears it.' }),
    assistant_id: t.string({
      description: create
        ? 'An assistant of the organisation: the item is exclusive to it. Omit (or "") for a global item.'
        : 'Absent: scope unchanged. "": the item becomes global. An assistant’s id: the item becomes exclusive to it and loses its exclusions.',
    }),
    file: t.field({
      type: 'File',
      description: `.txt .md .mdx .rst .adoc .html .pdf .xlsx .xls .csv, up to 10 MB, content matching the extension. Its text is extracted and indexed${create ? '' : ', replacing the previous file’s'}.`,
    }),
  }));

builder.mutationField('createKnowledgeItem', (t) =>
  t.prismaField({
    type: KnowledgeItem,
    description: 'Creates a knowledge item from text, a file or both (knowledge.manage).',
    args: itemArgs(true),
    resolve: (query, _root, args, ctx) => items.createItem(ctx, args, query),
  }),
);

builder.mutationField('updateKnowledgeItem', (t) =>
  t.prismaField({
    type: KnowledgeItem,
    description: 'Updates a knowledge item; omitted fields are unchanged (knowledge.manage).',
    args: { ...idArg('The item.'), ...itemArgs(false) },
    resolve: (query, _root, args, ctx) => items.updateItem(ctx, args.id, args, query),
  }),
);

builder.mutationField('deleteKnowledgeItem', (t) =>
  t.field({
    type: Success,
    description: 'Deletes a knowledge item and its exclusions (knowledge.manage).',
    args: idArg('The item.'),
    resolve: async (_root, args, ctx) => (await items.deleteItem(ctx, args.id), SUCCESS),
  }),
);

// Exclusions of global items

const exclusionArgs = builder.args((t) => ({
  id: t.field({ type: 'UUID', required: true, description: 'The item (must be global).' }),
  assistant_id: t.field({ type: 'UUID', required: true, description: 'An assistant of the organisation.' }),
}));

builder.mutationField('addKnowledgeExclusion', (t) =>
  t.prismaField({
    type: KnowledgeItem,
    description: 'Hides a global item from an assistant; idempotent. An exclusive item is a conflict (409) (knowledge.manage).',
    args: exclusionArgs,
    resolve: (query, _root, args, ctx) => scope.addExclusion(ctx, args.id, args.assistant_id, query),
  }),
);

builder.mutationField('removeKnowledgeExclusion', (t) =>
  t.prismaField({
    type: KnowledgeItem,
    description: 'Shows a global item to an assistant again; idempotent. An exclusive item is a conflict (409) (knowledge.manage).',
    args: exclusionArgs,
    resolve: (query, _root, args, ctx) => scope.removeExclusion(ctx, args.id, args.assistant_id, query),
  }),
);

builder.mutationField('setKnowledgeExclusions', (t) =>
  t.prismaField({
    type: KnowledgeItem,
    description:
      'Replaces the exclusions of a global item; [] shows it to every assistant. An exclusive item is a conflict (409) (knowledge.manage).',
    args: {
      ...idArg('The item (must be global).'),
      assistant_ids: t.arg({ type: ['UUID'], required: true, description: 'Assistants of the organisation that must not see the item.' }),
    },
    resolve: (query, _root, args, ctx) => scope.setExclusions(ctx, args.id, args.assistant_ids, query),
  }),
);

// Search

builder.queryField('searchKnowledge', (t) =>
  t.field({
    type: [KnowledgeSearchHit],
    description:
      'Ranked full-text search over name, description and content of the items an assistant sees, or of every item without assistant_id (knowledge.view).',
    args: {
      ...searchArgs,
      assistant_id: t.arg({ type: 'UUID', description: 'Search only what this assistant sees.' }),
    },
    resolve: (_root, args, ctx, info) => searchKnowledge(ctx, args, hitItemQuery(ctx, info)),
  }),
);
