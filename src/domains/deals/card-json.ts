// The deal card as PostgreSQL writes it in JSON: one SQL expression per field of Deal, of its product
// lines and of its tags, each giving byte for byte what the resolvers give: amounts as float8 (shortest
// round-trip digits, as JavaScript prints a number: amounts stay below 10^15, where PostgreSQL would
// switch to an exponent; Decimal(14,2) and the total cap keep them far below), timestamps as
// toISOString() prints them, null where GraphQL gives null, lines and tags in the loaders' order, no
// blanks. The deals list (REST and GraphQL) builds its page with it in one statement (board.ts); a
// selection with any other field (graph-only edges) is refused and left to the resolvers.
import { Prisma } from '../../generated/prisma/client.js';
import type { SelectedField } from '../../schema/json-fields.js';

const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** What a field's expression reads beyond `d` (the deal row). */
type Source = 'lead' | 'todo';

interface Column {
  sql: string;
  needs?: Source;
}

/** Deal fields over `d` (deals), `l` (its lead, left-joined) and `todo` (its pending and overdue counts). */
const DEAL: Record<string, Column> = {
  id: { sql: 'd.id' },
  number: { sql: 'd.number' },
  pipeline_id: { sql: 'd.pipeline_id' },
  stage_id: { sql: 'd.stage_id' },
  lead_id: { sql: 'd.lead_id' },
  owner_id: { sql: 'd.owner_id' },
  value: { sql: 'd.value::float8' },
  total: { sql: 'd.total::float8' },
  origin: { sql: 'd.origin' },
  loss_reason: { sql: 'd.loss_reason' },
  note: { sql: 'd.note' },
  won_at: { sql: iso('d.won_at') },
  lost_at: { sql: iso('d.lost_at') },
  stage_entered_at: { sql: iso('d.stage_entered_at') },
  created_at: { sql: iso('d.created_at') },
  updated_at: { sql: iso('d.updated_at') },
  lead_name: { sql: 'l.name', needs: 'lead' },
  lead_surname: { sql: 'l.surname', needs: 'lead' },
  lead_company: { sql: 'l.company', needs: 'lead' },
  lead_email: { sql: 'l.email', needs: 'lead' },
  lead_phone: { sql: 'l.phone', needs: 'lead' },
  lead_avatar: { sql: 'l.avatar_url', needs: 'lead' },
  lead_status_id: { sql: 'l.status_id', needs: 'lead' },
  pending_todos: { sql: 'todo.pending', needs: 'todo' },
  overdue_todos: { sql: 'todo.overdue', needs: 'todo' },
  __typename: { sql: `'Deal'` },
};

/** DealProduct fields over `p` (deal_products). */
const LINE: Record<string, string> = {
  id: 'p.id',
  product_id: 'p.product_id',
  name: 'p.name',
  price: 'p.price::float8',
  qty: 'p.qty',
  custom: 'p.custom',
  total: '(p.price * p.qty)::float8',
  __typename: `'DealProduct'`,
};

/** Tag fields over `t` (tags). */
const TAG: Record<string, string> = {
  id: 't.id',
  name: 't.name',
  color: 't.color',
  created_at: iso('t.created_at'),
  updated_at: iso('t.updated_at'),
  __typename: `'Tag'`,
};

/**
 * JSON text without the blanks json_build_object and json_agg write: an object is row_to_json of a row
 * whose columns are the response keys; an array is the objects joined by commas. Text comes out as
 * JSON.stringify writes it, so a fast answer is the very bytes of a resolved one.
 */
const array = (objects: string, order: string) => `'[' || COALESCE(string_agg(${objects}::text, ',' ORDER BY ${order}), '') || ']'`;

/** Nested lists of a deal: their GraphQL type, fields, and the ordered array of `item` (a row over the list's alias). */
const LISTS: Record<string, { type: string; fields: Record<string, string>; aggregate: (item: string) => string }> = {
  products: {
    type: 'DealProduct',
    fields: LINE,
    aggregate: (item) =>
      `(SELECT (${array('row_to_json(x)', 'p.position, p.created_at, p.id')})::json
        FROM deal_products p CROSS JOIN LATERAL (SELECT ${item}) x WHERE p.tenant_id = d.tenant_id AND p.deal_id = d.id)`,
  },
  tags: {
    type: 'Tag',
    fields: TAG,
    aggregate: (item) =>
      `(SELECT (${array('row_to_json(x)', 't.name, t.id')})::json
        FROM deal_tags dt JOIN tags t ON t.tenant_id = dt.tenant_id AND t.id = dt.tag_id CROSS JOIN LATERAL (SELECT ${item}) x
        WHERE dt.tenant_id = d.tenant_id AND dt.deal_id = d.id)`,
  },
};

/** Response keys are GraphQL names; checked anyway, as they are written into the SQL text. */
const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

/** A select list naming each expression by its response key. */
function columns(pairs: [string, string][]): string | null {
  if (pairs.some(([key]) => !NAME.test(key))) return null;
  return pairs.map(([key, sql]) => `${sql} AS "${key}"`).join(', ');
}

/** A deal card for a selection of Deal: the select list of its row over `d`, and what it joins. */
export interface DealCardSql {
  columns: string;
  lead: boolean;
  todo: boolean;
}

/** Null when the selection has a field not served here. */
export function dealCardSql(selection: readonly SelectedField[]): DealCardSql | null {
  const pairs: [string, string][] = [];
  const needs = new Set<Source>();
  for (const f of selection) {
    const column = DEAL[f.name];
    if (column) {
      pairs.push([f.key, column.sql]);
      if (column.needs) needs.add(column.needs);
      continue;
    }
    const list = LISTS[f.name];
    const sub = list && f.sub(list.type);
    if (!sub?.length || sub.some((s) => !list.fields[s.name])) return null;
    const item = columns(sub.map((s) => [s.key, list.fields[s.name]]));
    if (!item) return null;
    pairs.push([f.key, list.aggregate(item)]);
  }
  const select = columns(pairs);
  return select ? { columns: select, lead: needs.has('lead'), todo: needs.has('todo') } : null;
}

/** The JSON array of the cards of `page` (a subquery of deal rows, aliased d) in `order` (over d), as text. */
export function dealCardsSql(card: DealCardSql, page: Prisma.Sql, order: Prisma.Sql): Prisma.Sql {
  const joins = [
    card.lead ? 'LEFT JOIN leads l ON l.tenant_id = d.tenant_id AND l.id = d.lead_id' : '',
    card.todo
      ? `CROSS JOIN LATERAL (SELECT count(*)::int AS pending, (count(*) FILTER (WHERE a.due_at < now()))::int AS overdue
           FROM activities a WHERE a.tenant_id = d.tenant_id AND a.deal_id = d.id AND NOT a.done) todo`
      : '',
  ];
  return Prisma.sql`(SELECT '[' || COALESCE(string_agg(row_to_json(card)::text, ',' ORDER BY ${order}), '') || ']'
    FROM ${page} d ${Prisma.raw(joins.join(' '))} CROSS JOIN LATERAL (SELECT ${Prisma.raw(card.columns)}) card)`;
}
