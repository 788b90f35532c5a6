// Knowledge items: create and partial update (JSON or multipart with a file), read, list, delete.
// An item's `content` is its typed text followed by the text extracted from its file; the two parts are
// stored apart, so new typed text keeps the file's text and a new file replaces only the extracted part.
import { Prisma } from '../../generated/prisma/client.js';
import { syncedArray, withSyncKeys, SYNC_ORDER, type SyncArrayArgs } from '../common/sync.js';
import { requireTenant } from '../../auth/viewer.js';
import { constraintViolation, invalidField } from '../../errors.js';
import type { Context } from '../../context/context.js';
import type { Selection } from '../common/types.js';
import { optionalText, requiredText } from '../common/validate.js';
import { assistantNotFound } from './assistants.js';
import { readKnowledgeFile, type KnowledgeFile } from './files.js';
import { itemNotFound, scopeArg, visibleTo } from './scope.js';

export const LIMITS = { name: 255, description: 1000, usage_instruction: 2000, content: 2_000_000, source_url: 2048 } as const;

export interface ItemInput {
  name?: string | null;
  description?: string | null;
  content?: string | null;
  usage_instruction?: string | null;
  source_url?: string | null;
  assistant_id?: string | null;
  file?: File | null;
}

/** What the API calls `content`: the typed text, then the file's text, separated by a blank line. */
export function composeContent(item: { typed_text: string; file_text: string }): string {
  return item.typed_text && item.file_text ? `${item.typed_text}\n\n${item.file_text}` : item.typed_text || item.file_text;
}

interface ItemChanges {
  name?: string;
  description?: string;
  typed_text?: string;
  usage_instruction?: string | null;
  source_url?: string | null;
  assistant_id?: string | null;
}

/** The validated text fields of a create or update; an absent field is left out, null clears it. */
function textChanges(input: ItemInput): ItemChanges {
  const changes: ItemChanges = {};
  if (input.name !== undefined) changes.name = requiredText('name', input.name, LIMITS.name);
  if (input.description !== undefined) changes.description = optionalText('description', input.description, LIMITS.description) ?? '';
  if (input.content !== undefined) {
    if (input.content && input.content.length > LIMITS.content)
      throw invalidField('content', `aceita no máximo ${LIMITS.content} caracteres`);
    changes.typed_text = input.content ?? '';
  }
  if (input.usage_instruction !== undefined)
    changes.usage_instruction = optionalText('usage_instruction', input.usage_instruction, LIMITS.usage_instruction) || null;
  if (input.source_url !== undefined) changes.source_url = sourceUrl(input.source_url);
  const scope = scopeArg(input.assistant_id);
  if (scope !== undefined) changes.assistant_id = scope;
  return changes;
}

function sourceUrl(value: string | null): string | null {
  const url = optionalText('source_url', value, LIMITS.source_url);
  if (!url) return null;
  if (!/^https?:\/\/[^\s]+$/i.test(url) || !URL.canParse(url)) throw invalidField('source_url', 'deve ser uma URL http ou https');
  return url;
}

/** A form's empty file part (a file input left empty) is no file. */
const sentFile = (file: File | null | undefined): file is File => !!file && !(file.size === 0 && file.name === '');

function fileChanges(file: KnowledgeFile) {
  return { file_text: file.text, file_name: file.file_name, file_type: file.file_type, file_size: file.file_size };
}
type FileChanges = ReturnType<typeof fileChanges>;

/** The item's assistant must be one of the organisation's: the composite foreign key says so, 404 here. */
function assistantRefused(e: unknown): unknown {
  return constraintViolation(e) === 'foreign_key' ? assistantNotFound() : e;
}

/** The columns a new item is written with, and the type each bound value is cast to (every field of a write: the compiler checks). */
const ITEM_COLUMNS: Record<keyof ItemChanges | keyof FileChanges, 'text' | 'uuid' | 'int'> = {
  name: 'text',
  description: 'text',
  typed_text: 'text',
  usage_instruction: 'text',
  source_url: 'text',
  assistant_id: 'uuid',
  file_text: 'text',
  file_name: 'text',
  file_type: 'text',
  file_size: 'int',
};

/**
 * A new item, by one INSERT on the driver's fastest path (`pg` on PostgreSQL). Not Prisma's `create`:
 * an extracted text can be megabytes, and in Prisma's query compiler it held the event loop, so every
 * organisation's requests, for tens of milliseconds per file (docs/benchmarks.md, "Fairness").
 */
async function insertItem(ctx: Context, data: ItemChanges & Partial<FileChanges>): Promise<string> {
  const entries = Object.entries(data).filter(([, value]) => value !== undefined) as [keyof typeof ITEM_COLUMNS, unknown][];
  const [row] = await ctx.db.$tenantQueryDirect<{ id: string }>(
    (tenant) => Prisma.sql`INSERT INTO knowledge_items (tenant_id, ${Prisma.raw(entries.map(([column]) => column).join(', '))})
      VALUES (${tenant}, ${Prisma.join(entries.map(([column, value]) => Prisma.sql`${value}::${Prisma.raw(ITEM_COLUMNS[column])}`))})
      RETURNING id::text AS id`,
  );
  return row.id;
}

export async function createItem(ctx: Context, input: ItemInput, query: Selection = {}) {
  // The permission is checked once, by the root field (auth/access.ts).
  const { tenantId } = requireTenant(ctx.viewer);
  const changes = textChanges({ ...input, name: input.name ?? null });
  const file: Partial<FileChanges> = sentFile(input.file) ? fileChanges(await readKnowledgeFile(ctx, tenantId, input.file)) : {};
  try {
    const id = await insertItem(ctx, { ...changes, name: changes.name!, ...file });
    return await writtenItem(ctx, id, query, file.file_text);
  } catch (e) {
    throw assistantRefused(e);
  }
}

/**
 * Partial update. `assistant_id` moves the item between global and exclusive; an item that becomes
 * exclusive loses its exclusions. A file replaces the extracted text and the file's metadata.
 */
export async function updateItem(ctx: Context, id: string, input: ItemInput, query: Selection = {}) {
  // The permission is checked once, by the root field (auth/access.ts).
  const { tenantId } = requireTenant(ctx.viewer);
  const changes = textChanges(input);
  let file = {};
  if (sentFile(input.file)) {
    // Extraction takes a process and up to seconds: not for an item that does not exist.
    if (!(await ctx.db.knowledgeItem.findUnique({ where: { id }, select: { id: true } }))) throw itemNotFound();
    file = fileChanges(await readKnowledgeFile(ctx, tenantId, input.file));
  }
  const data = { ...changes, ...file };
  if (Object.keys(data).length) {
    await ctx.db.$transaction(async (tx) => {
      // The update locks the row: exclusion writes on this item wait for it (scope.ts).
      const { count } = await tx.knowledgeItem.updateMany({ where: { id }, data }).catch((e) => {
        throw assistantRefused(e);
      });
      if (count === 0) throw itemNotFound();
      if (changes.assistant_id) await tx.knowledgeExclusion.deleteMany({ where: { item_id: id } });
    });
  }
  // Read whole: a concurrent writer's file may have replaced this one since, and the answer must not
  // mix its metadata with this write's text (the row as it now is, like any read).
  return getItem(ctx, id, query);
}

/**
 * The item just created with this file text, read back without it: the text is already here, and it can
 * be megabytes, which reading back cost the event loop (every organisation's requests) about 18 ms per
 * 1.7 MB in `pg`'s parser and Prisma's result handling (docs/benchmarks.md, "Fairness"). Only for a new
 * item: no other writer knows its id before this answer.
 */
async function writtenItem(ctx: Context, id: string, query: Selection, fileText: string | undefined) {
  if (fileText === undefined) return getItem(ctx, id, query);
  const select = query.select as Record<string, unknown> | undefined;
  if (select && !select.file_text) return getItem(ctx, id, query);
  const without = select
    ? { ...query, select: { ...select, file_text: false } }
    : { ...query, omit: { ...(query.omit as object | undefined), file_text: true } };
  return { ...(await getItem(ctx, id, without)), file_text: fileText };
}

export async function getItem(ctx: Context, id: string, query: Selection = {}) {
  const item = await ctx.db.knowledgeItem.findUnique({ ...query, where: { id } });
  if (!item) throw itemNotFound();
  return item;
}

export const NEWEST_FIRST = [{ created_at: 'desc' as const }, { id: 'desc' as const }];

/** Every item of the organisation, global and exclusive, newest first. */
export function listItems(ctx: Context, args: SyncArrayArgs, query: Selection = {}) {
  return syncedArray(
    ctx,
    'knowledge_items',
    args,
    () => ctx.db.knowledgeItem.findMany({ ...query, orderBy: NEWEST_FIRST }),
    (where, take) => ctx.db.knowledgeItem.findMany({ ...withSyncKeys(query), where, orderBy: SYNC_ORDER, take }),
  );
}

/** What one assistant sees: global items minus its exclusions, plus its exclusive items. */
export async function assistantItems(ctx: Context, assistantId: string, query: Selection = {}) {
  if (!(await ctx.db.assistant.findUnique({ where: { id: assistantId }, select: { id: true } }))) throw assistantNotFound();
  return ctx.db.knowledgeItem.findMany({ ...query, where: visibleTo(assistantId), orderBy: NEWEST_FIRST });
}

export async function deleteItem(ctx: Context, id: string): Promise<void> {
  // Its exclusions go with it (ON DELETE CASCADE).
  const { count } = await ctx.db.knowledgeItem.deleteMany({ where: { id } });
  if (count === 0) throw itemNotFound();
}
