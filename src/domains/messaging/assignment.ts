// Who answers a conversation, by hand: the rules of `assignee_id` in PUT /backend/conversations/{id}
// (the conversation service applies them), and the announcement of a new assignee to the live
// subscription. Routing's automatic assignment is routing.ts.
import { Prisma } from '../../generated/prisma/client.js';
import type { Config } from '../../config.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { invalidField } from '../../errors.js';
import { tenantIs } from '../../tenant-sql.js';
import { announceConversationOnCommit } from './live.js';
import { conversationData } from './shapes.js';

/**
 * Checks that `assigneeId` may answer the conversation (in `departmentId`, after the change): a user of
 * the organisation, not deleted, who sees it under the department rules (owners and admins see every
 * conversation; an operator those without a department and those of their departments). Past their
 * capacity only when `pastCapacity` (an owner or admin assigning by hand). 400 naming `assignee_id` otherwise.
 * Locks the user row, so that the capacity count and routing's see each other's assignments.
 */
export async function checkAssignee(
  tx: Pick<TenantTx, '$tenantQuery'>,
  assigneeId: string,
  departmentId: string | null,
  options: { pastCapacity: boolean },
): Promise<void> {
  const [user] = await tx.$tenantQuery<{ role: string; capacity: number | null; member: boolean }[]>(
    (tenant) => Prisma.sql`
    SELECT u.role::text AS role, u.capacity,
      ${departmentId ? Prisma.sql`EXISTS (SELECT 1 FROM department_members m WHERE m.tenant_id = u.tenant_id AND m.department_id = ${departmentId}::uuid AND m.user_id = u.id)` : Prisma.sql`TRUE`} AS member
    FROM users u WHERE ${tenantIs(tenant, 'u')} AND u.id = ${assigneeId}::uuid AND u.deleted_at IS NULL
    FOR UPDATE OF u`,
  );
  if (!user) throw invalidField('assignee_id', 'o usuário não pertence a esta organização (ou foi removido)');
  if (user.role === 'operator' && !user.member)
    throw invalidField('assignee_id', 'o usuário não vê esta conversa: não é membro do departamento dela');
  if (options.pastCapacity || user.capacity === null) return;
  const [{ open }] = await tx.$tenantQuery<{ open: number }[]>(
    (tenant) => Prisma.sql`
    SELECT count(*)::int AS open FROM conversations WHERE ${tenantIs(tenant)} AND assignee_id = ${assigneeId}::uuid AND status = 'active'`,
  );
  if (open >= user.capacity) throw invalidField('assignee_id', `o usuário já tem ${open} conversas abertas (capacidade ${user.capacity})`);
}

/** Announces the conversation as it now is (`assignee`) to `conversationUpdated`, once `tx` commits. */
export async function announceAssignment(tx: TenantTx, config: Config, conversationId: string): Promise<void> {
  const conversation = await tx.conversation.findUnique({
    where: { id: conversationId },
    include: {
      lead: { select: { id: true, name: true, phone: true, whatsapp_user_id: true, whatsapp_username: true } },
      assignee: { select: { id: true, name: true } },
    },
  });
  if (!conversation) return;
  announceConversationOnCommit(tx, config, [
    { kind: 'assignee', conversation: conversationData(conversation, conversation.lead, conversation.assignee) },
  ]);
}
