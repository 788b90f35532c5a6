// A list page ({ data, pagination }: DealPage, ConversationPage) as JSON text on the JSON path
// (json-fields.ts): PostgreSQL writes `data`, the page writes its envelope and pagination in the
// selection's key order, as the resolvers would.
import type { SelectedField } from './json-fields.js';
import { jsonObject } from './json-sql.js';

/** A page type: its GraphQL names, its pagination's fields, and how its items are written as SQL. */
export interface PageType<Card> {
  page: string;
  item: string;
  pagination: string;
  paginationFields: ReadonlySet<string>;
  /** The pagination fields that need the count. */
  countedFields: ReadonlySet<string>;
  /** The SQL of an item for its sub-selection; null when it is not served here. */
  card: (selection: readonly SelectedField[]) => Card | null;
}

/** What to build for a selection of a page. */
export interface PagePlan<Card> {
  /** Response keys in order, each with how its value is written. */
  keys: { key: string; kind: 'data' | 'pagination' | 'typename'; fields?: { key: string; name: string }[] }[];
  /** The item SQL of `data`, when selected (once). */
  card?: Card;
  /** Whether the pagination asks for anything that needs the count. */
  counted: boolean;
}

/** The plan for a selection of a page; null when a part of it is not served here. */
export function planPage<Card>(type: PageType<Card>, selection: readonly SelectedField[]): PagePlan<Card> | null {
  const plan: PagePlan<Card> = { keys: [], counted: false };
  for (const f of selection) {
    if (f.name === '__typename') plan.keys.push({ key: f.key, kind: 'typename' });
    else if (f.name === 'data') {
      const sub = f.sub(type.item);
      const card = !plan.card && sub?.length ? type.card(sub) : null;
      if (!card) return null;
      plan.card = card;
      plan.keys.push({ key: f.key, kind: 'data' });
    } else if (f.name === 'pagination') {
      const sub = f.sub(type.pagination);
      if (!sub?.length || sub.some((s) => !type.paginationFields.has(s.name))) return null;
      if (sub.some((s) => type.countedFields.has(s.name))) plan.counted = true;
      plan.keys.push({ key: f.key, kind: 'pagination', fields: sub.map((s) => ({ key: s.key, name: s.name })) });
    } else return null;
  }
  return plan;
}

/** The page as JSON text: `data` as PostgreSQL wrote it (null: no rows), the pagination from `info`. */
export function pageJson<Card>(type: PageType<Card>, plan: PagePlan<Card>, data: string | null, info: Record<string, unknown>): string {
  return jsonObject(
    plan.keys.map(({ key, kind, fields }) => {
      if (kind === 'typename') return [key, JSON.stringify(type.page)];
      if (kind === 'data') return [key, data ?? '[]'];
      return [key, jsonObject(fields!.map((f) => [f.key, JSON.stringify(f.name === '__typename' ? type.pagination : info[f.name])]))];
    }),
  );
}
