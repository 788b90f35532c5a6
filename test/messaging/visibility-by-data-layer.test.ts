// Operator visibility is applied by the request's scoped client (db/row-policy.ts), not by the services:
// queries written here WITHOUT any visibility code (plain findMany, count, aggregate, a lead with its
// conversations, relation counts, raw SQL) see only what the caller may see. An owner sees every row.
import { beforeAll, describe, expect, it } from 'vitest';
import { authenticate } from '../../src/auth/authenticate.js';
import { createContext } from '../../src/context/context.js';
import { Prisma } from '../../src/generated/prisma/client.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { addMember, inbound, makeChannel, makeDepartment, makeUser, nextMobile, type UserWithKey } from './helpers.js';

const api = useTestApp();

let org: Org;
let operator: UserWithKey;
/** Conversations: none (no department), mine (the operator's department), theirs (another department). */
const talks = {} as Record<'none' | 'mine' | 'theirs', Awaited<ReturnType<typeof inbound>>>;

const dbOf = async (key: string) =>
  createContext(api.app.deps, { viewer: await authenticate(api.db.prisma, `Bearer ${key}`), requestId: 'data-layer' }).db;

beforeAll(async () => {
  org = await api.newOrg();
  const mine = await makeDepartment(api, org, 'Minha');
  const theirs = await makeDepartment(api, org, 'Outra');
  operator = await makeUser(api, org, 'operator');
  await addMember(api, org, mine.id, operator.id);
  const channels = {
    none: await makeChannel(api, org, { name: 'Sem departamento' }),
    mine: await makeChannel(api, org, { name: 'Minha', department_id: mine.id }),
    theirs: await makeChannel(api, org, { name: 'Outra', department_id: theirs.id }),
  };
  // One lead talks on all three channels, one conversation at a time.
  const phone = nextMobile();
  for (const c of ['none', 'mine', 'theirs'] as const) {
    talks[c] = await inbound(api, org, channels[c].id, phone, `mensagem ${c}`);
    await api.rest('PUT', `/backend/conversations/${talks[c].conversation.id}`, { key: org.key, body: { status: 'archived' } });
  }
});

describe('visibility applied by the scoped client', () => {
  const visible = () => [talks.none.conversation.id, talks.mine.conversation.id].sort();
  const all = () => [...visible(), talks.theirs.conversation.id].sort();
  const ids = (rows: { id: string }[]) => rows.map((r) => r.id).sort();

  it('filters plain reads, counts and aggregates of conversations and messages', async () => {
    for (const [key, expected] of [
      [operator.key, visible()],
      [org.key, all()],
    ] as const) {
      const db = await dbOf(key);
      expect(ids(await db.conversation.findMany())).toEqual(expected);
      expect(await db.conversation.count()).toBe(expected.length);
      expect((await db.conversation.aggregate({ _count: { _all: true } }))._count._all).toBe(expected.length);
      expect(await db.message.count()).toBe(expected.length);
      expect((await db.message.findMany()).map((m) => m.conversation_id).sort()).toEqual(expected);
      expect(await db.message.groupBy({ by: ['conversation_id'], orderBy: { conversation_id: 'asc' } })).toHaveLength(expected.length);
    }
  });

  it('answers a hidden conversation as absent, and changes or removes nothing of it', async () => {
    const db = await dbOf(operator.key);
    const hidden = talks.theirs.conversation.id;
    expect(await db.conversation.findUnique({ where: { id: hidden } })).toBeNull();
    expect(await db.conversation.findFirst({ where: { id: hidden } })).toBeNull();
    expect(await db.message.findUnique({ where: { id: talks.theirs.message.id } })).toBeNull();
    expect((await db.conversation.updateMany({ where: { id: hidden }, data: { unread_count: 0 } })).count).toBe(0);
    expect((await db.message.deleteMany({ where: { conversation_id: hidden } })).count).toBe(0);
    expect(await (await dbOf(org.key)).message.count({ where: { conversation_id: hidden } })).toBe(1);
  });

  it('filters relations nested into other models’ queries, and their counts', async () => {
    for (const [key, expected] of [
      [operator.key, visible()],
      [org.key, all()],
    ] as const) {
      const db = await dbOf(key);
      const [lead] = await db.lead.findMany({
        where: { id: talks.none.lead.id },
        include: {
          conversations: { include: { messages: true } },
          messages: true,
          _count: { select: { conversations: true, messages: true } },
        },
      });
      expect(ids(lead.conversations)).toEqual(expected);
      expect(lead.conversations.flatMap((c) => c.messages).length).toBe(expected.length);
      expect(lead.messages.map((m) => m.conversation_id).sort()).toEqual(expected);
      expect(lead._count).toEqual({ conversations: expected.length, messages: expected.length });
      const selected = await db.lead.findUniqueOrThrow({
        where: { id: talks.none.lead.id },
        select: { conversations: { select: { id: true } } },
      });
      expect(ids(selected.conversations)).toEqual(expected);
    }
  });

  it('lets a message read its conversation (visible whenever the message is)', async () => {
    const db = await dbOf(operator.key);
    const message = await db.message.findUniqueOrThrow({ where: { id: talks.mine.message.id }, include: { conversation: true } });
    expect(message.conversation.id).toBe(talks.mine.conversation.id);
  });

  it('hands raw statements the policy by alias', async () => {
    const sql = (db: Awaited<ReturnType<typeof dbOf>>) =>
      db.$tenantQuery<{ id: string }[]>(
        (tenant, visible) =>
          Prisma.sql`SELECT c.id::text AS id FROM conversations c WHERE c.tenant_id = ${tenant} AND ${visible.conversation(Prisma.sql`c`)}`,
      );
    expect(ids(await sql(await dbOf(operator.key)))).toEqual(visible());
    expect(ids(await sql(await dbOf(org.key)))).toEqual(all());
  });

  it('works inside the scoped client’s transactions', async () => {
    const db = await dbOf(operator.key);
    expect(await db.$transaction((tx) => tx.conversation.count())).toBe(visible().length);
  });
});
