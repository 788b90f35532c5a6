// The deal card, each field declared once: its GraphQL type, where its resolvers read it (the deal row,
// its lead, its todo counts, its lines or tags) and, beside it, the SQL that writes the same JSON value
// (schema/sql-fields.ts). From this table come the Deal type (types.ts), the JSON path (card-json.ts),
// the extras the resolvers read (loaders.ts) and the event payloads (payload.ts: the REST read's
// selection run on the JSON path). test/deals/card-drift.test.ts fills every column and compares the
// two ways byte for byte.
//
// SQL aliases: `d` the deal, `l` its lead (left-joined), `todo` its pending/overdue counts, `p` a line,
// `t` a tag. Amounts are float8 (shortest round-trip digits, as JavaScript prints a number; they stay
// far below 10^15, where PostgreSQL would switch to an exponent), timestamps as toISOString() writes them.
import type { Deal as DealRow, DealProduct as LineRow, Lead } from '../../generated/prisma/client.js';
import { isoSql } from '../../schema/json-sql.js';
import type { SqlField, SqlFields } from '../../schema/sql-fields.js';
import type { ListSizeName } from '../../schema/list-bounds.js';
import { Decimal, toNumber } from '../common/money.js';
import { MAX_TAGS } from '../leads/limits.js';
import { TAG_FIELDS } from '../leads/types.js';
import { MAX_LINES } from './lines.js';

/** The lead's columns a deal shows (read at read time, never copied). */
export type LeadColumn = keyof Pick<Lead, 'name' | 'surname' | 'company' | 'email' | 'phone' | 'avatar_url' | 'status_id'>;

export interface DealField extends SqlField<DealRow> {
  /** Read from this column of the deal's lead (null without one), through the extras. */
  lead?: LeadColumn;
  /** Read from the deal's todo counts, through the extras. */
  todo?: 'pending' | 'overdue';
}

/** A list of a deal's rows: the resolvers read them from the extras, the JSON path aggregates them in order. */
export interface DealList {
  list: true;
  /** The GraphQL type of an item, and its fields. */
  type: 'DealProduct' | 'Tag';
  items: SqlFields<never>;
  cap: number;
  /** Its row in list_sizes (schema/list-bounds.ts). */
  sized: ListSizeName;
  description: string;
  /** The deal's rows, over `d`: FROM and WHERE, the row's alias, and their order. */
  from: string;
  where: string;
  row: string;
  order: string;
}

const column = (name: keyof DealRow, type: SqlField<DealRow>['type'], sql: string, options: Partial<DealField> = {}): DealField => ({
  type,
  column: name,
  sql,
  ...options,
});
const amount = (name: 'value' | 'total', description: string): DealField => ({
  type: 'Float',
  description,
  sql: `d.${name}::float8`,
  resolve: (d) => toNumber(d[name]),
});
const lead = (name: LeadColumn, type: 'String' | 'UUID', sql: string, description: string): DealField => ({
  type,
  nullable: true,
  description,
  lead: name,
  sql,
});

/** DealProduct fields over `p` (deal_products). */
export const LINE_FIELDS: SqlFields<LineRow> = {
  id: { type: 'UUID', column: 'id', sql: 'p.id' },
  product_id: { type: 'UUID', column: 'product_id', nullable: true, description: 'Null for one-off lines.', sql: 'p.product_id' },
  name: { type: 'String', column: 'name', sql: 'p.name' },
  price: { type: 'Float', description: 'Unit price.', resolve: (l) => toNumber(l.price), sql: 'p.price::float8' },
  qty: { type: 'Int', column: 'qty', description: 'Quantity, at least 1.', sql: 'p.qty' },
  custom: { type: 'Boolean', column: 'custom', description: 'True for a one-off line that never enters the catalog.', sql: 'p.custom' },
  total: {
    type: 'Float',
    description: 'price × qty.',
    resolve: (l) => toNumber(new Decimal(l.price).times(l.qty)),
    sql: '(p.price * p.qty)::float8',
  },
};

/** Every field of a REST deal card, in the order of the Deal type (its graph-only edges follow, in types.ts). */
export const DEAL_CARD: Record<string, DealField | DealList> = {
  id: column('id', 'UUID', 'd.id'),
  number: column('number', 'Int', 'd.number', { description: 'Sequential per organisation, from 1.' }),
  pipeline_id: column('pipeline_id', 'UUID', 'd.pipeline_id'),
  stage_id: column('stage_id', 'UUID', 'd.stage_id', { description: 'Current stage.' }),
  lead_id: column('lead_id', 'UUID', 'd.lead_id', { description: 'Linked lead.' }),
  owner_id: column('owner_id', 'UUID', 'd.owner_id', { nullable: true, description: 'Responsible user.' }),
  value: amount('value', 'Manual value, used when the deal has no product lines.'),
  total: amount('total', 'Σ price × qty over the lines, or value when there are none.'),
  origin: column('origin', 'String', 'd.origin', { description: 'Default `manual`.' }),
  loss_reason: column('loss_reason', 'String', 'd.loss_reason', { nullable: true, description: 'Present only on lost deals.' }),
  note: column('note', 'String', 'd.note', { nullable: true }),
  won_at: column('won_at', 'DateTime', isoSql('d.won_at'), { nullable: true, description: 'Set when the deal enters the won stage.' }),
  lost_at: column('lost_at', 'DateTime', isoSql('d.lost_at'), { nullable: true, description: 'Set when the deal enters the lost stage.' }),
  stage_entered_at: column('stage_entered_at', 'DateTime', isoSql('d.stage_entered_at'), {
    description: 'When the deal entered its current stage (on create and on every stage change): its time in stage.',
  }),
  created_at: column('created_at', 'DateTime', isoSql('d.created_at')),
  updated_at: column('updated_at', 'DateTime', isoSql('d.updated_at')),
  lead_name: lead('name', 'String', 'l.name', 'The lead’s name.'),
  lead_surname: lead('surname', 'String', 'l.surname', 'The lead’s surname.'),
  lead_company: lead('company', 'String', 'l.company', 'The lead’s company.'),
  lead_email: lead('email', 'String', 'l.email', 'The lead’s email.'),
  lead_phone: lead('phone', 'String', 'l.phone', 'The lead’s phone (E.164).'),
  lead_avatar: lead('avatar_url', 'String', 'l.avatar_url', 'Avatar URL of the lead.'),
  lead_status_id: lead('status_id', 'UUID', 'l.status_id', 'Status of the lead.'),
  products: {
    list: true,
    type: 'DealProduct',
    items: LINE_FIELDS as SqlFields<never>,
    cap: MAX_LINES,
    sized: 'deal_products.deal_id',
    description: `Product lines, in order (at most ${MAX_LINES}).`,
    from: 'deal_products p',
    where: 'p.tenant_id = d.tenant_id AND p.deal_id = d.id',
    row: 'p',
    order: 'p.position, p.created_at, p.id',
  },
  tags: {
    list: true,
    type: 'Tag',
    items: TAG_FIELDS as SqlFields<never>,
    cap: MAX_TAGS,
    sized: 'deal_tags.deal_id',
    description: `Tags, by name (at most ${MAX_TAGS}).`,
    from: 'deal_tags dt JOIN tags t ON t.tenant_id = dt.tenant_id AND t.id = dt.tag_id',
    where: 'dt.tenant_id = d.tenant_id AND dt.deal_id = d.id',
    row: 't',
    order: 't.name, t.id',
  },
  pending_todos: { type: 'Int', description: 'Activities not done.', todo: 'pending', sql: 'todo.pending' },
  overdue_todos: { type: 'Int', description: 'Activities not done whose due date has passed.', todo: 'overdue', sql: 'todo.overdue' },
};

export const isList = (entry: DealField | DealList): entry is DealList => 'list' in entry;

/** The lead columns the card reads: the extras select exactly these. */
export const LEAD_COLUMNS = Object.values(DEAL_CARD).flatMap((f) => (!isList(f) && f.lead ? [f.lead] : []));

/** What a card statement joins over `d` for the fields that read its lead (`l`) or its todo counts (`todo`). */
export const LEAD_JOIN = 'LEFT JOIN leads l ON l.tenant_id = d.tenant_id AND l.id = d.lead_id';
export const TODO_JOIN = `CROSS JOIN LATERAL (SELECT count(*)::int AS pending, (count(*) FILTER (WHERE a.due_at < now()))::int AS overdue
    FROM activities a WHERE a.tenant_id = d.tenant_id AND a.deal_id = d.id AND NOT a.done) todo`;
