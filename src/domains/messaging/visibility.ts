// Operator visibility (spec "Departments and members", rules 1 and 2) as ONE policy: owners and admins
// see every conversation; an operator sees conversations without a department and those of the
// departments they belong to; a message is visible when its conversation is. The condition is evaluated
// by the database inside each statement (membership is joined, never cached), so a membership change
// applies to the very next request. A conversation outside the condition does not exist for the caller
// (404).
//
// The policy is applied by the data layer, not by the services: the manifest declares it
// (`rowPolicies`), and the request's scoped client (ctx.db, db/row-policy.ts) adds `conversationWhere`
// / `messageWhere` to every query of conversations and messages, including the relations Pothos nests
// into other models' queries (a lead's conversations, their counts), and hands raw statements the SQL
// form as `visible.conversation(alias)`. A service writes no visibility code: a query that forgets it
// cannot exist. Background work and provider webhooks use the system's client, which sees every row.
import { Prisma } from '../../generated/prisma/client.js';
import type { Viewer } from '../../auth/viewer.js';
import { requireTenant } from '../../auth/viewer.js';
import type { RowPolicy, Visibility } from '../../db/row-policy.js';

declare module '../../db/row-policy.js' {
  interface VisibleSql {
    /** Whether the caller sees the conversation (a `conversations` row, or any row with tenant_id and department_id) aliased `alias`. */
    conversation(alias: Prisma.Sql): Prisma.Sql;
  }
}

/** Who is looking: everything (owner, admin, the system acting for a channel) or one operator. */
export type Audience = { kind: 'all' } | { kind: 'operator'; userId: string };

export const SYSTEM: Audience = { kind: 'all' };

export function audienceOf(viewer: Viewer | null): Audience {
  const user = requireTenant(viewer);
  return user.role === 'operator' ? { kind: 'operator', userId: user.userId } : SYSTEM;
}

/** Prisma condition on Conversation. */
function conversationWhere(audience: Audience): Prisma.ConversationWhereInput {
  if (audience.kind === 'all') return {};
  return { OR: [{ department_id: null }, { department: { members: { some: { user_id: audience.userId } } } }] };
}

/** Prisma condition on Message: the message's conversation is visible. */
function messageWhere(audience: Audience): Prisma.MessageWhereInput {
  return audience.kind === 'all' ? {} : { conversation: conversationWhere(audience) };
}

/** SQL condition on a conversations row aliased `alias` (e.g. Prisma.sql`c`). */
function conversationSql(audience: Audience, alias: Prisma.Sql): Prisma.Sql {
  if (audience.kind === 'all') return Prisma.sql`TRUE`;
  return Prisma.sql`(${alias}.department_id IS NULL OR EXISTS (
    SELECT 1 FROM department_members m
    WHERE m.tenant_id = ${alias}.tenant_id AND m.department_id = ${alias}.department_id AND m.user_id = ${audience.userId}::uuid))`;
}

/** The policy as the data layer applies it (declared in the manifest). */
export const operatorVisibility: RowPolicy = {
  models: { Conversation: {}, Message: { via: 'conversation' } },
  visibility(viewer): Visibility {
    const audience: Audience = viewer?.role === 'operator' ? { kind: 'operator', userId: viewer.userId } : SYSTEM;
    return {
      key: audience.kind === 'all' ? '' : `operator:${audience.userId}`,
      where: audience.kind === 'all' ? {} : { Conversation: conversationWhere(audience), Message: messageWhere(audience) },
      sql: { conversation: (alias) => conversationSql(audience, alias) },
    };
  },
};
