// Operator visibility (spec "Departments and members", rules 1 and 2) as ONE policy: owners and admins
// see every conversation; an operator sees conversations without a department and those of the
// departments they belong to. The condition is evaluated by the database inside each statement
// (membership is joined, never cached), so a membership change applies to the very next request.
// Every read and write of conversations and messages builds its condition here: `conversationWhere`
// for Prisma queries, `conversationSql` for raw SQL, `messageWhere` for messages (through their
// conversation). A conversation outside the condition does not exist for the caller (404).
import { Prisma } from '../../generated/prisma/client.js';
import type { Viewer } from '../../auth/viewer.js';
import { requireTenant } from '../../auth/viewer.js';
import { tenantIs, type TenantTx } from '../../db/tenant-scope.js';

/** Who is looking: everything (owner, admin, the system acting for a channel) or one operator. */
export type Audience = { kind: 'all' } | { kind: 'operator'; userId: string };

export const SYSTEM: Audience = { kind: 'all' };

export function audienceOf(viewer: Viewer | null): Audience {
  const user = requireTenant(viewer);
  return user.role === 'operator' ? { kind: 'operator', userId: user.userId } : SYSTEM;
}

/** Prisma condition on Conversation. */
export function conversationWhere(audience: Audience): Prisma.ConversationWhereInput {
  if (audience.kind === 'all') return {};
  return { OR: [{ department_id: null }, { department: { members: { some: { user_id: audience.userId } } } }] };
}

/** Prisma condition on Message: the message's conversation is visible. */
export function messageWhere(audience: Audience): Prisma.MessageWhereInput {
  return audience.kind === 'all' ? {} : { conversation: conversationWhere(audience) };
}

/** SQL condition on a conversations row aliased `alias` (e.g. Prisma.sql`c`). */
export function conversationSql(audience: Audience, alias: Prisma.Sql): Prisma.Sql {
  if (audience.kind === 'all') return Prisma.sql`TRUE`;
  return Prisma.sql`(${alias}.department_id IS NULL OR EXISTS (
    SELECT 1 FROM department_members m
    WHERE m.tenant_id = ${alias}.tenant_id AND m.department_id = ${alias}.department_id AND m.user_id = ${audience.userId}::uuid))`;
}

/** Whether the caller sees this conversation: one EXISTS statement with the policy in its SQL form. */
export async function isConversationVisible(
  tx: Pick<TenantTx, '$tenantQuery'>,
  audience: Audience,
  conversationId: string,
): Promise<boolean> {
  if (audience.kind === 'all') return true;
  const [row] = await tx.$tenantQuery<{ visible: boolean }[]>(
    (tenant) => Prisma.sql`
    SELECT EXISTS (SELECT 1 FROM conversations c WHERE ${tenantIs(tenant, 'c')} AND c.id = ${conversationId}::uuid AND ${conversationSql(audience, Prisma.sql`c`)}) AS visible`,
  );
  return row.visible;
}
