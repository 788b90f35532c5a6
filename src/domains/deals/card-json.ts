// The deal card as PostgreSQL writes it in JSON, from the SQL declared beside each field (card.ts):
// byte for byte what the resolvers give, null where GraphQL gives null, lines and tags in the
// loaders' order, no blanks. The deals list (REST and GraphQL) builds its page with it in one statement
// (board.ts), and deal events their payloads (payload.ts); a selection with any other field
// (graph-only edges) is refused and left to the resolvers. The JSON rules are schema/json-sql.ts's.
import { Prisma } from '../../generated/prisma/client.js';
import type { SelectedField } from '../../schema/json-fields.js';
import { jsonArraySql, jsonRowsSql, selectList } from '../../schema/json-sql.js';
import { DEAL_CARD, isList, LEAD_JOIN, TODO_JOIN, type DealList } from './card.js';

/** The ordered JSON array of a deal's list, each item a row of `item` (a select list over the list's alias). */
const aggregate = (list: DealList, item: string) =>
  `(SELECT (${jsonArraySql('row_to_json(x)', list.order)})::json FROM ${list.from} CROSS JOIN LATERAL (SELECT ${item}) x WHERE ${list.where})`;

/** A deal card for a selection of Deal: the select list of its row over `d`, and what it joins. */
export interface DealCardSql {
  columns: string;
  lead: boolean;
  todo: boolean;
}

const typename = (type: string) => `'${type}'`;

/** Null when the selection has a field not served here. */
export function dealCardSql(selection: readonly SelectedField[]): DealCardSql | null {
  const pairs: [string, string][] = [];
  let lead = false;
  let todo = false;
  for (const f of selection) {
    if (f.name === '__typename') {
      pairs.push([f.key, typename('Deal')]);
      continue;
    }
    const entry = Object.hasOwn(DEAL_CARD, f.name) ? DEAL_CARD[f.name] : undefined;
    if (!entry) return null;
    if (!isList(entry)) {
      pairs.push([f.key, entry.sql]);
      lead ||= !!entry.lead;
      todo ||= !!entry.todo;
      continue;
    }
    const sub = f.sub(entry.type);
    if (!sub?.length) return null;
    const items: [string, string][] = [];
    for (const s of sub) {
      if (s.name === '__typename') items.push([s.key, typename(entry.type)]);
      else if (Object.hasOwn(entry.items, s.name)) items.push([s.key, entry.items[s.name].sql]);
      else return null;
    }
    const item = selectList(items);
    if (!item) return null;
    pairs.push([f.key, aggregate(entry, item)]);
  }
  const select = selectList(pairs);
  return select ? { columns: select, lead, todo } : null;
}

/** The joins a card needs over `d`. */
export const cardJoins = (card: DealCardSql) => [card.lead ? LEAD_JOIN : '', card.todo ? TODO_JOIN : ''].join(' ');

/** The JSON array of the cards of `page` (a subquery of deal rows, aliased d) in `order` (over d), as text. */
export const dealCardsSql = (card: DealCardSql, page: Prisma.Sql, order: string) =>
  jsonRowsSql(Prisma.sql`${page} d ${Prisma.raw(cardJoins(card))}`, card.columns, order);
