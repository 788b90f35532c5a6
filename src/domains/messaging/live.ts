// Live messages (`messageAdded`) and conversations (`conversationUpdated`). Changes are announced after
// the transaction that made them commits, with everything a subscriber answers with: the message as
// stored, or the conversation as its REST read returns it, and in both the conversation's department.
// A subscriber is served from the announcement: no statement per event. Visibility is checked against
// the operator's departments, read when the subscription starts and again at the first event after a
// change of membership in the organisation is announced (adding or removing a member, deleting a
// department), or a minute after the last read should that announcement be lost; the conversation's
// department is the one the change carried. The caller's role is the one it had when it subscribed.
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
import { audienceOf } from './visibility.js';

// ---- messageAdded ----

/** What `messageAdded` carries; across Redis its dates arrive as ISO strings. */
export interface MessageAnnouncement {
  message: Message;
  /** The department of the message's conversation when the message was stored. */
  department_id: string | null;
}

export function announceMessage(config: Config, tenantId: string, message: Message, departmentId: string | null) {
  const event: MessageAnnouncement = { message, department_id: departmentId };
  liveHub(config).publish('messageAdded', tenantId, event);
}

/** Announces the stored message once `tx` commits. */
export function announceMessageOnCommit(tx: TenantTx, config: Config, message: Message, departmentId: string | null) {
  const tenantId = tx.$tenantId;
  afterCommit(tx, () => announceMessage(config, tenantId, message, departmentId));
}

const revived = (m: Message): Message => ({ ...m, created_at: new Date(m.created_at), updated_at: new Date(m.updated_at) });

/** Announced by a process of the previous version (during a rolling deploy): the id alone. */
type LegacyAnnouncement = { message_id: string };

/** New messages of the caller's organisation, of the conversations the caller can see. */
export function messagesFor(ctx: Context): AsyncIterable<Message> {
  const viewer = requireTenant(ctx.viewer);
  const events = pipe(liveHub(ctx.config).subscribe('messageAdded', viewer.tenantId), untilStopped(ctx.config)) as unknown as AsyncIterable<
    MessageAnnouncement | LegacyAnnouncement
  >;
  return pipe(
    visibleTo(ctx, events, (event) => ('message' in event ? event.department_id : null)),
    map((event) => ('message' in event ? revived(event.message) : ctx.db.message.findFirst({ where: { id: event.message_id } }))),
    filter((message): message is Message => message !== null),
  );
}

// ---- conversationUpdated ----
// A conversation's changes (a new message, marked read, archived or reopened, assigned to a department
// or to an assignee)
// are announced with the conversation as its REST read returns it.

export type ConversationChangeKind = 'message' | 'read' | 'archived' | 'reopened' | 'assigned' | 'assignee';

export type ConversationSnapshot = ReturnType<typeof conversationData>;

export interface ConversationChange {
  kind: ConversationChangeKind;
  conversation: ConversationSnapshot;
}

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
  const changes = pipe(liveHub(ctx.config).subscribe('conversationUpdated', viewer.tenantId), untilStopped(ctx.config));
  return visibleTo(ctx, changes as AsyncIterable<ConversationChange>, (change) => change.conversation.department_id);
}

// ---- visibility ----

/** Visible departments are read again at the latest this long after they were read. */
const DEPARTMENTS_MAX_AGE_MS = 60_000;

/**
 * The events of `source` whose conversation (in department `departmentOf(event)`) the caller sees. An
 * operator's departments are read when the subscription starts, then again at the first event after
 * a membership change is announced or after DEPARTMENTS_MAX_AGE_MS: one statement per subscriber and
 * membership change, never per event.
 */
function visibleTo<T>(ctx: Context, source: AsyncIterable<T>, departmentOf: (event: T) => string | null): AsyncIterable<T> {
  const viewer = requireTenant(ctx.viewer);
  const audience = audienceOf(viewer);
  if (audience.kind === 'all') return source;
  const userId = audience.userId;
  return new Repeater<T>(async (push, stop) => {
    // Listening before the first read: a change made meanwhile marks the read stale.
    const membership = liveHub(ctx.config).subscribe('departmentsChanged', viewer.tenantId)[Symbol.asyncIterator]();
    const events = source[Symbol.asyncIterator]();
    void stop.then(() => Promise.all([membership.return?.(), events.return?.()]));
    let stale = false;
    let readAt = Date.now();
    let departments = memberDepartments(ctx, userId);
    // Awaited at the first event that needs it; a failed read must not go unhandled before that.
    departments.catch(() => {});
    // A membership stream that fails ends the subscription with its error (never a silent one).
    void (async () => {
      while (!(await membership.next()).done) stale = true;
    })().catch((error: unknown) => stop(error));
    let next;
    while (!(next = await events.next()).done) {
      const departmentId = departmentOf(next.value);
      if (departmentId === null) {
        await push(next.value);
        continue;
      }
      if (stale || Date.now() - readAt > DEPARTMENTS_MAX_AGE_MS) {
        stale = false;
        readAt = Date.now();
        departments = memberDepartments(ctx, userId);
      }
      if ((await departments).has(departmentId)) await push(next.value);
    }
    stop();
  });
}

async function memberDepartments(ctx: Context, userId: string): Promise<Set<string>> {
  const rows = await ctx.db.departmentMember.findMany({ where: { user_id: userId }, select: { department_id: true } });
  return new Set(rows.map((r) => r.department_id));
}
