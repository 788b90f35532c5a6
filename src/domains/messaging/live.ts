// Live messages for the `messageAdded` subscription. A message is announced after the transaction that
// stored it commits (inbound, the WhatsApp webhook, send); each subscriber re-reads it through the
// visibility policy, so a caller only receives messages of conversations it can see at that moment.
// The hub (events/live.ts) crosses processes through Redis with REDIS_URL.
import { filter, map, pipe, Repeater } from 'graphql-yoga';
import { requireTenant } from '../../auth/viewer.js';
import type { Config } from '../../config.js';
import type { Context } from '../../context/context.js';
import { afterCommit } from '../../db/after-commit.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { liveHub, untilStopped } from '../../events/live.js';
import type { Message } from '../../generated/prisma/client.js';
import type { conversationData } from './shapes.js';
import { audienceOf, messageWhere } from './visibility.js';

/** Call once the message's transaction has committed. */
export function announceMessage(config: Config, tenantId: string, messageId: string) {
  liveHub(config).publish('messageAdded', tenantId, { message_id: messageId });
}

/** New messages of the caller's organisation that the caller can see, read when each one arrives. */
export function messagesFor(ctx: Context): AsyncIterable<Message> {
  const viewer = requireTenant(ctx.viewer);
  const audience = audienceOf(viewer);
  return pipe(
    liveHub(ctx.config).subscribe('messageAdded', viewer.tenantId),
    untilStopped(ctx.config),
    map((event) => ctx.db.message.findFirst({ where: { AND: [{ id: event.message_id }, messageWhere(audience)] } })),
    filter((message): message is Message => message !== null),
  );
}

// ---- conversationUpdated ----
// A conversation's changes (a new message, marked read, archived or reopened, assigned to a department)
// are announced after they commit with the conversation as its REST read returns it, so a subscriber
// answers from the announcement. Visibility is checked against the operator's departments, read when
// the subscription starts and again after a membership change in the organisation is announced (or a
// minute later, should such an announcement be lost): no statement per event.

export type ConversationChangeKind = 'message' | 'read' | 'archived' | 'reopened' | 'assigned';

export type ConversationSnapshot = ReturnType<typeof conversationData>;

export interface ConversationChange {
  kind: ConversationChangeKind;
  conversation: ConversationSnapshot;
}

/** Visible departments are read again at the latest this long after they were read. */
const DEPARTMENTS_MAX_AGE_MS = 60_000;

export function announceConversation(config: Config, tenantId: string, changes: ConversationChange[]) {
  for (const change of changes) liveHub(config).publish('conversationUpdated', tenantId, change);
}

/** Announces once `tx` commits. */
export function announceConversationOnCommit(tx: TenantTx, config: Config, changes: ConversationChange[]) {
  const tenantId = tx.$tenantId;
  afterCommit(tx, () => announceConversation(config, tenantId, changes));
}

/** Call once a change of department membership has committed. */
export function announceDepartmentsChanged(config: Config, tenantId: string) {
  liveHub(config).publish('departmentsChanged', tenantId, {});
}

/** The conversations' changes of the caller's organisation that the caller can see. */
export function conversationChangesFor(ctx: Context): AsyncIterable<ConversationChange> {
  const viewer = requireTenant(ctx.viewer);
  const audience = audienceOf(viewer);
  const changes = pipe(liveHub(ctx.config).subscribe('conversationUpdated', viewer.tenantId), untilStopped(ctx.config));
  if (audience.kind === 'all') return changes as AsyncIterable<ConversationChange>;
  const userId = audience.userId;
  return new Repeater<ConversationChange>(async (push, stop) => {
    // Listening before the first read: a change made meanwhile marks the read stale.
    const membership = liveHub(ctx.config).subscribe('departmentsChanged', viewer.tenantId)[Symbol.asyncIterator]();
    const source = (changes as AsyncIterable<ConversationChange>)[Symbol.asyncIterator]();
    void stop.then(() => Promise.all([membership.return?.(), source.return?.()]));
    let stale = true;
    let readAt = 0;
    let departments = new Set<string>();
    void (async () => {
      while (!(await membership.next()).done) stale = true;
    })();
    let next;
    while (!(next = await source.next()).done) {
      const { conversation } = next.value;
      if (stale || Date.now() - readAt > DEPARTMENTS_MAX_AGE_MS) {
        stale = false;
        readAt = Date.now();
        departments = await memberDepartments(ctx, userId);
      }
      if (conversation.department_id === null || departments.has(conversation.department_id)) await push(next.value);
    }
    stop();
  });
}

async function memberDepartments(ctx: Context, userId: string): Promise<Set<string>> {
  const rows = await ctx.db.departmentMember.findMany({ where: { user_id: userId }, select: { department_id: true } });
  return new Set(rows.map((r) => r.department_id));
}
