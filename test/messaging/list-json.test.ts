// The conversations list built as JSON by PostgreSQL (domains/messaging/conversation-json.ts): its answers
// are byte for byte what the resolvers write for the same selection (REST and GraphQL, over conversations
// whose every column holds a distinct non-null value, and rows with the nullable ones null), a page costs
// the key lookup and one statement at 20 and at 100 rows, visibility and tenancy hold on this path, and
// a selection it does not serve (or an error) goes to the resolvers, counted.
import { beforeAll, describe, expect, it } from 'vitest';
import { syncHorizon } from '../../src/domains/common/sync.js';
import { jsonFallbackCount } from '../../src/schema/json-fallbacks.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { jsonPath } from '../helpers/json-path.js';
import { addMember, inbound, makeChannel, makeDepartment, makeUser, nextMobile, type UserWithKey } from './helpers.js';

const api = useTestApp();
const { graphqlText, resolverText } = jsonPath(api, () => org.key);

/** The REST route's selection (every field of a conversation but its graph-only edges). */
const CARD =
  'id lead { id name phone whatsapp_user_id whatsapp_username } last_message { content role timestamp } unread_count window_expires_at status department_id channel_id assignee_id assignee { id name } first_response_at waiting_since created_at updated_at';
const PAGINATION = 'pagination { total limit offset has_more next_cursor }';
const LIST = `query ($limit: Int, $offset: Int, $lead_id: UUID, $status: ConversationStatus, $assignee_id: String, $since: String, $cursor: String) {
  conversations(limit: $limit, offset: $offset, lead_id: $lead_id, status: $status, assignee_id: $assignee_id, updated_since: $since, cursor: $cursor) { data { ${CARD} } ${PAGINATION} } }`;

let org: Org;
let sales: { id: string };
let seller: UserWithKey;
let outsider: UserWithKey;
/** Conversations of the fixture: in Vendas (every column set), in Suporte, without a department, without messages. */
const ids: Record<'sales' | 'support' | 'open' | 'empty', { conversation: string; lead: string }> = {} as never;

/** The REST answer the resolvers give for a query string: the envelope spread over the field's value. */
async function resolvedRest(query: string, key = org.key) {
  const args = new URLSearchParams(query);
  const int = (name: string) => (args.has(name) ? Number(args.get(name)) : null);
  const vars = {
    limit: int('limit'),
    offset: int('offset'),
    lead_id: args.get('lead_id'),
    status: args.get('status'),
    assignee_id: args.get('assignee_id'),
    since: args.get('updated_since'),
    cursor: args.get('cursor'),
  };
  const value = JSON.stringify(JSON.parse(await resolverText(LIST, vars, key)).data.conversations);
  return `{"success":true,${value.slice(1)}`;
}

async function restText(query: string, key = org.key) {
  const response = await api.raw(`/backend/conversations${query}`, { headers: { authorization: `Bearer ${key}` } });
  expect(response.status, query).toBe(200);
  return response.text();
}

beforeAll(async () => {
  org = await api.newOrg();
  sales = await makeDepartment(api, org, 'Vendas');
  const support = await makeDepartment(api, org, 'Suporte');
  const other = await makeDepartment(api, org, 'Outro');
  seller = await makeUser(api, org, 'operator');
  outsider = await makeUser(api, org, 'operator');
  await addMember(api, org, sales.id, seller.id);
  await addMember(api, org, other.id, outsider.id);
  const salesChannel = await makeChannel(api, org, { name: 'Vendas', department_id: sales.id });
  const plain = await makeChannel(api, org, { name: 'Geral' });

  const a = await inbound(api, org, salesChannel.id, nextMobile(), 'primeira', 'Ana');
  const b = await inbound(api, org, plain.id, nextMobile(), 'segunda', 'Bruno');
  const c = await inbound(api, org, plain.id, nextMobile(), 'terceira', 'Carla');
  expect(
    (await api.rest('PUT', `/backend/conversations/${b.conversation.id}`, { key: org.key, body: { department_id: support.id } })).status,
  ).toBe(200);
  ids.sales = { conversation: a.conversation.id, lead: a.lead.id };
  ids.support = { conversation: b.conversation.id, lead: b.lead.id };
  ids.open = { conversation: c.conversation.id, lead: c.lead.id };

  // Every column a distinct value that JSON must escape or format: quotes, backslashes, control
  // characters, non-BMP text, timestamps with milliseconds (updated_at is the database's clock).
  await api.db.sql.query(`UPDATE leads SET name = $2 WHERE id = $1`, [a.lead.id, 'João "Zé" \\ Ñandú\n\t\u0001\u001f 😀 </script> \u2028']);
  await api.db.sql.query(`UPDATE users SET name = $2 WHERE id = $1`, [seller.id, 'Vendedor "Sé" \\ \u0002 😀']);
  await api.db.sql.query(
    `UPDATE conversations SET unread_count = 7, status = 'archived', last_message_content = $2, last_message_role = 'assistant',
       last_message_at = '2025-03-04T05:06:07.089Z', created_at = '2024-01-02T03:04:05.006Z', assignee_id = $3,
       first_response_at = '2024-05-06T07:08:09.010Z', waiting_since = '2024-06-07T08:09:10.011Z' WHERE id = $1`,
    [a.conversation.id, 'Olá "cliente" \\ barra\r\nlinha\b\f\u007f € 𝄞', seller.id],
  );
  await api.db.sql.query(
    `UPDATE conversations SET unread_count = 0, last_message_content = NULL, created_at = '2023-12-31T23:59:59.999Z' WHERE id = $1`,
    [c.conversation.id],
  );
  // A conversation with no message yet (no last message, no channel, no department).
  const [empty] = await api.db.sql.query<{ id: string; lead_id: string }>(
    `WITH l AS (INSERT INTO leads (tenant_id, name, phone) VALUES ($1, 'Davi', $2) RETURNING tenant_id, id)
     INSERT INTO conversations (tenant_id, lead_id, status) SELECT tenant_id, id, 'archived' FROM l RETURNING id::text AS id, lead_id::text AS lead_id`,
    [org.tenantId, nextMobile()],
  );
  ids.empty = { conversation: empty.id, lead: empty.lead_id };
});

describe('conversations list as JSON from PostgreSQL', () => {
  it('the fixture: every column of the first conversation is set, and the others cover the nulls', async () => {
    const body = (await api.rest('GET', `/backend/conversations?lead_id=${ids.sales.lead}`, { key: org.key })).body;
    const [one] = body.data;
    for (const [k, v] of Object.entries(one)) expect(v, k).not.toBeNull();
    expect(one).toMatchObject({ unread_count: 7, status: 'archived', department_id: sales.id, created_at: '2024-01-02T03:04:05.006Z' });
    expect(one.last_message).toEqual({
      content: expect.stringContaining('"cliente"'),
      role: 'assistant',
      timestamp: '2025-03-04T05:06:07.089Z',
    });
    expect(one.lead.name).toContain('"Zé"');
    expect(new Set([one.created_at, one.updated_at, one.last_message.timestamp]).size).toBe(3);
    const open = (await api.rest('GET', `/backend/conversations?lead_id=${ids.open.lead}`, { key: org.key })).body.data[0];
    expect(open).toMatchObject({ department_id: null, unread_count: 0, last_message: { content: '' } });
    const empty = (await api.rest('GET', `/backend/conversations?lead_id=${ids.empty.lead}`, { key: org.key })).body.data[0];
    expect(empty).toMatchObject({ last_message: null, channel_id: null, department_id: null, assignee: null, waiting_since: null });
    expect(one.assignee).toEqual({ id: seller.id, name: expect.stringContaining('"Sé"') });
  });

  it('REST answers byte for byte what the resolvers write, for every filter and page', async () => {
    const queries = [
      '',
      '?limit=2&offset=1',
      '?status=archived',
      '?status=active',
      `?lead_id=${ids.sales.lead}`,
      '?limit=1&offset=99',
      '?limit=101&offset=-3',
      '?limit=100',
      '?assignee_id=none',
      `?assignee_id=${seller.id}`,
    ];
    for (const query of queries) expect(await restText(query), query).toBe(await resolvedRest(query));
  });

  it('a sync page (updated_since, cursor): REST answers byte for byte what the resolvers write', async () => {
    // Wait until the fixture is below the sync horizon (another session's open transaction may hold it back).
    const now = Date.now();
    for (let i = 0; i < 3000 && (await syncHorizon(api.db.prisma)).getTime() <= now; i++) await new Promise((r) => setTimeout(r, 10));
    const first = await restText('?updated_since=1970-01-01T00:00:00Z&limit=3');
    expect(first).toBe(await resolvedRest('?updated_since=1970-01-01T00:00:00Z&limit=3'));
    const cursor = JSON.parse(first).pagination.next_cursor as string;
    expect(cursor).toEqual(expect.any(String));
    const next = await restText(`?cursor=${encodeURIComponent(cursor)}&limit=3`);
    expect(next).toBe(await resolvedRest(`?cursor=${encodeURIComponent(cursor)}&limit=3`));
    expect(JSON.parse(next).pagination).toMatchObject({ has_more: false, next_cursor: null, total: 1 });
    const all = [...JSON.parse(first).data, ...JSON.parse(next).data];
    expect(all).toHaveLength(4);
    expect(all.map((c: { updated_at: string }) => c.updated_at)).toEqual(all.map((c: { updated_at: string }) => c.updated_at).sort());
  });

  it('GraphQL answers byte for byte what the resolvers write, for the selections it serves', async () => {
    const queries: [string, Record<string, unknown>][] = [
      [LIST, {}],
      [LIST, { limit: 2, offset: 1, status: 'active' }],
      // Aliases, fragments, __typename at every level, a partial card, no pagination or no data.
      [
        `{ a: conversations(limit: 3) { __typename p: pagination { __typename has_more total } d: data { ...C who: lead { __typename phone } } } __typename }
         fragment C on Conversation { __typename i: id last_message { __typename t: timestamp role } ... on Conversation { s: status } }`,
        {},
      ],
      ['{ conversations { pagination { limit offset next_cursor } } }', {}],
      ['{ conversations(offset: 1) { data { id } } }', {}],
      // @include / @skip decided by variables, and two root list fields.
      [
        `query ($m: Boolean!) { one: conversations(limit: 1) { data { id last_message @include(if: $m) { content } lead @skip(if: $m) { name } } }
         two: conversations(status: archived) { pagination { total has_more } } }`,
        { m: true },
      ],
      [
        `query ($m: Boolean!) { one: conversations(limit: 1) { data { id last_message @include(if: $m) { content } lead @skip(if: $m) { name } } } }`,
        { m: false },
      ],
      [LIST, { since: '1970-01-01T00:00:00Z', limit: 2 }],
    ];
    for (const [query, variables] of queries) {
      const before = jsonFallbackCount('Query.conversations', 'selection') + jsonFallbackCount('Query.conversations', 'error');
      let served!: { status: number; text: string };
      const statements = await api.countStatements(async () => (served = await graphqlText(query, variables)));
      expect(served.status).toBe(200);
      expect(served.text, query).toBe(await resolverText(query, variables));
      // Served by the JSON path: nothing fell back, and each root field was one statement (a sync page reads its horizon too).
      expect(jsonFallbackCount('Query.conversations', 'selection') + jsonFallbackCount('Query.conversations', 'error'), query).toBe(before);
      const roots = (query.match(/conversations\(|conversations \{/g) ?? []).length;
      expect(statements, query).toBeLessThanOrEqual(1 + roots + (variables.since ? 1 : 0));
    }
  });

  it('falls back to the resolvers for selections it does not serve, with their answers, counted', async () => {
    const queries = [
      // Graph-only edges.
      '{ conversations { data { id messages(last: 2) { totalCount nodes { content } } } } }',
      '{ conversations { data { id lead { name details { name company } } } } }',
      // A root field beside the list that has no JSON path.
      '{ conversations { data { id } } channels { id name } }',
    ];
    for (const query of queries) {
      const before = jsonFallbackCount('Query.conversations', 'selection');
      let served!: { status: number; text: string };
      const statements = await api.countStatements(async () => (served = await graphqlText(query)));
      expect(served.status).toBe(200);
      expect(served.text).toBe(await resolverText(query));
      expect(statements).toBeGreaterThan(2);
      expect(jsonFallbackCount('Query.conversations', 'selection'), query).toBe(before + 1);
    }
    // Counted per request, not only when the operation is first seen.
    const before = jsonFallbackCount('Query.conversations', 'selection');
    await graphqlText(queries[2]);
    expect(jsonFallbackCount('Query.conversations', 'selection')).toBe(before + 1);
  });

  it('errors as the resolvers do (a bad cursor, a bad date), counted as fallbacks on GraphQL', async () => {
    const query = 'query ($cursor: String, $since: String) { conversations(cursor: $cursor, updated_since: $since) { data { id } } }';
    for (const variables of [{ cursor: 'nope' }, { since: 'ontem' }]) {
      const before = jsonFallbackCount('Query.conversations', 'error');
      const answer = JSON.parse((await graphqlText(query, variables)).text);
      const resolved = JSON.parse(await resolverText(query, variables));
      expect(answer.data).toBeNull();
      expect(answer.errors.map((e: any) => [e.message, e.path])).toEqual(resolved.errors.map((e: any) => [e.message, e.path]));
      expect(answer.errors[0].extensions.code).toBe('INVALID_INPUT');
      expect(jsonFallbackCount('Query.conversations', 'error')).toBe(before + 1);
    }
    for (const query of ['?cursor=nope', '?updated_since=ontem']) {
      const bad = await api.rest('GET', `/backend/conversations${query}`, { key: org.key });
      expect(bad.status, query).toBe(400);
      expect(bad.body).toMatchObject({ success: false, error: { code: 'VALIDATION_ERROR' } });
    }
  });
});

describe('visibility and tenancy on the JSON path', () => {
  it('an operator sees its departments’ conversations and those without one, byte for byte as the resolvers do', async () => {
    for (const query of ['', '?status=archived', '?limit=1&offset=1']) {
      expect(await restText(query, seller.key), query).toBe(await resolvedRest(query, seller.key));
      expect(await restText(query, outsider.key), query).toBe(await resolvedRest(query, outsider.key));
    }
    const seen = (text: string) => (JSON.parse(text).data as { id: string }[]).map((c) => c.id).sort();
    expect(seen(await restText('', seller.key))).toEqual([ids.sales.conversation, ids.open.conversation, ids.empty.conversation].sort());
    expect(seen(await restText('', outsider.key))).toEqual([ids.open.conversation, ids.empty.conversation].sort());
  });

  it('an operator of another department sees nothing of a department’s conversations, on REST and GraphQL', async () => {
    const before = jsonFallbackCount('Query.conversations', 'selection') + jsonFallbackCount('Query.conversations', 'error');
    for (const lead of [ids.sales.lead, ids.support.lead]) {
      let text!: string;
      const statements = await api.countStatements(async () => (text = await restText(`?lead_id=${lead}`, outsider.key)));
      expect(statements).toBeLessThanOrEqual(2);
      expect(text).toBe('{"success":true,"data":[],"pagination":{"total":0,"limit":20,"offset":0,"has_more":false,"next_cursor":null}}');
      const gql = JSON.parse(
        (await graphqlText(`{ conversations(lead_id: "${lead}") { data { id } pagination { total } } }`, {}, outsider.key)).text,
      );
      expect(gql).toEqual({ data: { conversations: { data: [], pagination: { total: 0 } } } });
    }
    // The seller sees its department's one, but not Suporte's.
    expect(JSON.parse(await restText(`?lead_id=${ids.sales.lead}`, seller.key)).data.map((c: { id: string }) => c.id)).toEqual([
      ids.sales.conversation,
    ]);
    expect(JSON.parse(await restText(`?lead_id=${ids.support.lead}`, seller.key)).data).toEqual([]);
    // A membership change applies to the next request.
    await addMember(api, org, sales.id, outsider.id);
    expect(JSON.parse(await restText(`?lead_id=${ids.sales.lead}`, outsider.key)).data.map((c: { id: string }) => c.id)).toEqual([
      ids.sales.conversation,
    ]);
    expect((await api.rest('DELETE', `/backend/departments/${sales.id}/members/${outsider.id}`, { key: org.key })).status).toBe(204);
    expect(JSON.parse(await restText(`?lead_id=${ids.sales.lead}`, outsider.key)).data).toEqual([]);
    expect(jsonFallbackCount('Query.conversations', 'selection') + jsonFallbackCount('Query.conversations', 'error')).toBe(before);
  });

  it('another organisation reads none of these conversations, and its own list holds only its own', async () => {
    const other = await api.newOrg('Outra');
    const channel = await makeChannel(api, other);
    const theirs = await inbound(api, other, channel.id, nextMobile(), 'deles', 'Deles');
    for (const lead of Object.values(ids).map((x) => x.lead)) {
      expect(await restText(`?lead_id=${lead}`, other.key)).toBe(
        '{"success":true,"data":[],"pagination":{"total":0,"limit":20,"offset":0,"has_more":false,"next_cursor":null}}',
      );
    }
    const own = JSON.parse(await restText('', other.key));
    expect(own.data.map((c: { id: string }) => c.id)).toEqual([theirs.conversation.id]);
    expect(own.pagination.total).toBe(1);
    // A cursor of this organisation's list does not page another's.
    const now = Date.now();
    for (let i = 0; i < 3000 && (await syncHorizon(api.db.prisma)).getTime() <= now; i++) await new Promise((r) => setTimeout(r, 10));
    const cursor = JSON.parse(await restText('?updated_since=1970-01-01T00:00:00Z&limit=1')).pagination.next_cursor;
    expect((await api.rest('GET', `/backend/conversations?cursor=${encodeURIComponent(cursor)}`, { key: other.key })).status).toBe(400);
  });
});

describe('statements', () => {
  it('a page costs the key lookup and one statement, at 20 and at 100 rows, on REST and GraphQL', async () => {
    const big = await api.newOrg('Grande');
    const channel = await makeChannel(api, big);
    await inbound(api, big, channel.id, nextMobile(), 'primeira');
    // 120 more conversations with their leads, straight into the tables.
    await api.db.sql.query(
      `WITH l AS (INSERT INTO leads (tenant_id, name, phone) SELECT $1, 'Lead ' || g, '+5511970' || lpad(g::text, 6, '0') FROM generate_series(1, 120) g RETURNING tenant_id, id)
       INSERT INTO conversations (tenant_id, lead_id, channel_id, last_message_content, last_message_role, last_message_at, unread_count)
       SELECT tenant_id, id, $2, 'oi', 'user', now(), 1 FROM l`,
      [big.tenantId, channel.id],
    );
    await api.rest('GET', '/backend/conversations?limit=1', { key: big.key }); // the key's last_used_at write, once
    const counts: Record<string, number> = {};
    for (const limit of [20, 100]) {
      let rest: any;
      counts[`rest ${limit}`] = await api.countStatements(
        async () => (rest = await api.rest('GET', `/backend/conversations?limit=${limit}`, { key: big.key })),
      );
      expect(rest.body.data).toHaveLength(limit);
      let gql!: { status: number; text: string };
      counts[`graphql ${limit}`] = await api.countStatements(async () => (gql = await graphqlText(LIST, { limit }, big.key)));
      expect(gql.status).toBe(200);
      expect(JSON.parse(gql.text).data.conversations.data).toEqual(rest.body.data);
    }
    expect(counts['rest 20']).toBe(counts['rest 100']);
    expect(counts['graphql 20']).toBe(counts['graphql 100']);
    for (const n of Object.values(counts)) expect(n).toBeLessThanOrEqual(2);
  });
});
