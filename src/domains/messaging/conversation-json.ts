// The conversations list (Query.conversations, GET /backend/conversations) as PostgreSQL writes it in
// JSON: the page, its embedded lead and last message, and the count, in ONE statement (a sync page reads
// its horizon first, as the resolvers do), within the visibility policy (conversationListSql). Each field
// is one SQL expression giving byte for byte what the resolvers give (schema/json-sql.ts); a selection
// with anything else (the graph-only `messages` and `lead.details`) is refused and left to the resolvers.
import { Prisma } from '../../generated/prisma/client.js';
import type { Context } from '../../context/context.js';
import type { JsonFieldCompiler, SelectedField } from '../../schema/json-fields.js';
import { isoSql, jsonRowsSql, objectSelect, selectList } from '../../schema/json-sql.js';
import { pageJson, planPage, type PagePlan, type PageType } from '../../schema/json-page.js';
import { cursorAfter, openSync, syncSql } from '../common/sync.js';
import { offsetPagination, offsetWindow } from '../common/types.js';
import { requireTenant } from '../../auth/viewer.js';
import { CONVERSATIONS_MAX_LIMIT, conversationListSql, syncPagination, type ConversationListArgs } from './conversations.js';
import { limitSql } from '../../limit-sql.js';
import { NO_COUNT, type CountColumns, type SnapshotCount } from '../../db/snapshot-counts.js';

/** Scalar fields of Conversation over `c` (conversations). */
const CONVERSATION: Record<string, string> = {
  id: 'c.id',
  unread_count: 'c.unread_count',
  window_expires_at: isoSql(`(c.last_inbound_at + interval '24 hours')`),
  status: 'c.status',
  department_id: 'c.department_id',
  channel_id: 'c.channel_id',
  assignee_id: 'c.assignee_id',
  first_response_at: isoSql('c.first_response_at'),
  waiting_since: isoSql('c.waiting_since'),
  created_at: isoSql('c.created_at'),
  updated_at: isoSql('c.updated_at'),
  __typename: `'Conversation'`,
};

/** ConversationLead over `l` (the conversation's lead, joined). */
const LEAD: Record<string, string> = {
  id: 'l.id',
  name: 'l.name',
  phone: 'l.phone',
  whatsapp_user_id: 'l.whatsapp_user_id',
  whatsapp_username: 'l.whatsapp_username',
  __typename: `'ConversationLead'`,
};

/** ConversationAssignee over `u` (the assignee, joined when there is one). */
const ASSIGNEE: Record<string, string> = {
  id: 'u.id',
  name: 'u.name',
  __typename: `'ConversationAssignee'`,
};

/** LastMessage over `c`: the columns the message's transaction keeps (shapes.ts lastMessage). */
const LAST_MESSAGE: Record<string, string> = {
  content: `COALESCE(c.last_message_content, '')`,
  role: 'c.last_message_role',
  timestamp: isoSql('c.last_message_at'),
  __typename: `'LastMessage'`,
};

/** A conversation card: the select list of its row over `c` (and `l` when `lead`), after `objects`. */
export interface ConversationCardSql {
  columns: string;
  lead: boolean;
  /** The nested objects' rows, each `CROSS JOIN LATERAL (SELECT …) oN`: row_to_json(oN) is then a plain row expression, not a subquery per row. */
  objects: string[];
}

/** Null when the selection has a field not served here. */
export function conversationCardSql(selection: readonly SelectedField[]): ConversationCardSql | null {
  const pairs: [string, string][] = [];
  const objects: string[] = [];
  const object = (select: string) => {
    const alias = `o${objects.length + 1}`;
    objects.push(`CROSS JOIN LATERAL (SELECT ${select}) ${alias}`);
    return `row_to_json(${alias})`;
  };
  let lead = false;
  for (const f of selection) {
    if (Object.hasOwn(CONVERSATION, f.name)) {
      pairs.push([f.key, CONVERSATION[f.name]]);
    } else if (f.name === 'lead') {
      const select = objectSelect(f.sub('ConversationLead'), LEAD);
      if (!select) return null;
      pairs.push([f.key, object(select)]);
      lead = true;
    } else if (f.name === 'assignee') {
      const select = objectSelect(f.sub('ConversationAssignee'), ASSIGNEE);
      if (!select) return null;
      const alias = `o${objects.length + 1}`;
      objects.push(
        `LEFT JOIN LATERAL (SELECT ${select} FROM users u WHERE u.tenant_id = c.tenant_id AND u.id = c.assignee_id) ${alias} ON TRUE`,
      );
      pairs.push([f.key, `CASE WHEN c.assignee_id IS NULL THEN NULL ELSE row_to_json(${alias}) END`]);
    } else if (f.name === 'last_message') {
      const select = objectSelect(f.sub('LastMessage'), LAST_MESSAGE);
      if (!select) return null;
      pairs.push([f.key, `CASE WHEN c.last_message_at IS NULL THEN NULL ELSE ${object(select)} END`]);
    } else return null;
  }
  const columns = selectList(pairs);
  return columns ? { columns, lead, objects } : null;
}

/** ConversationPage on the JSON path. has_more of an offset page compares with the count; of a sync page, it is whether a row follows. */
const CONVERSATION_PAGE: PageType<ConversationCardSql> = {
  page: 'ConversationPage',
  item: 'Conversation',
  pagination: 'SyncPagination',
  paginationFields: new Set(['total', 'limit', 'offset', 'has_more', 'next_cursor', '__typename']),
  countedFields: new Set(['total', 'has_more']),
  card: conversationCardSql,
};

interface PageHead extends CountColumns {
  data: string | null;
  last_at?: Date | null;
  last_id?: string | null;
  more?: boolean;
}

/** A page of the conversations list as JSON text: one statement (after the sync horizon, for a sync page). */
export async function conversationsJson(ctx: Context, args: ConversationListArgs, plan: PagePlan<ConversationCardSql>): Promise<string> {
  requireTenant(ctx.viewer);
  const window = offsetWindow(args.limit, args.offset, CONVERSATIONS_MAX_LIMIT);
  const sync = await openSync(ctx, 'conversations', args, window.limit);
  const card = plan.card;
  let count = null as SnapshotCount | null;
  // A page that asks for neither rows nor counts (limit, offset and next_cursor of an offset page) reads nothing.
  const [head] =
    !card && !plan.counted && !sync
      ? [{ total_count: null, count_snapshot: null, data: null }]
      : await ctx.db.$tenantQueryDirect<PageHead>((tenant, visible) => {
          const filter = conversationListSql(ctx, tenant, visible, args);
          const where = sync ? Prisma.sql`${filter} AND ${syncSql(sync, 'c')}` : filter;
          const orderText = sync ? 'c.updated_at ASC, c.id ASC' : 'c.updated_at DESC, c.id DESC';
          const order = Prisma.raw(orderText);
          const offset = sync ? 0 : window.offset;
          count = plan.counted ? ctx.db.$counts.count(Prisma.sql`SELECT count(*) FROM conversations c WHERE ${where}`) : null;
          const data = card
            ? jsonRowsSql(
                Prisma.sql`(SELECT c.* FROM conversations c WHERE ${where} ORDER BY ${order} ${limitSql(window.limit, offset)}) c
          ${card.lead ? Prisma.sql`JOIN leads l ON l.tenant_id = c.tenant_id AND l.id = c.lead_id` : Prisma.empty} ${Prisma.raw(card.objects.join(' '))}`,
                card.columns,
                orderText,
              )
            : Prisma.sql`NULL::text`;
          // A sync page's next cursor: its last row, when a row follows it.
          const next = sync
            ? Prisma.sql`, last.updated_at AS last_at, last.id AS last_id,
          EXISTS (SELECT 1 FROM conversations c WHERE ${where} ORDER BY ${order} ${limitSql(1, window.limit, true)}) AS more
        FROM (SELECT NULL) one
        LEFT JOIN LATERAL (SELECT c.updated_at, c.id FROM conversations c WHERE ${where} ORDER BY ${order} ${limitSql(1, window.limit - 1, true)}) last ON true`
            : Prisma.empty;
          const counted = count?.columns ?? NO_COUNT;
          return Prisma.sql`SELECT ${counted}, ${data} AS data ${next}`;
        });
  const total = count?.read(head) ?? 0;
  const info: Record<string, unknown> = sync
    ? syncPagination(
        total,
        window.limit,
        head.more && head.last_id ? cursorAfter(sync, { updated_at: head.last_at!, id: head.last_id }) : null,
      )
    : { ...offsetPagination(total, window), next_cursor: null };
  return pageJson(CONVERSATION_PAGE, plan, head.data, info);
}

/** Query.conversations served as JSON text when the selection allows (schema/json-fields.ts). */
export const conversationPageJson: JsonFieldCompiler = (selection) => {
  const plan = planPage(CONVERSATION_PAGE, selection);
  return plan && ((ctx, args) => conversationsJson(ctx, args as ConversationListArgs, plan));
};
