// Queuing routing work (routing.ts runs it): one `conversations.route` job per department with routing
// that may now hand out a conversation. Written in the statement or transaction of the change that
// calls for it: a conversation that starts waiting unassigned (an inbound message), a new conversation,
// a member who comes online or whose capacity grows, a member's conversation archived or reassigned
// (capacity freed), a member added, a department's routing turned on.
import { Prisma } from '../../generated/prisma/client.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { fairQueue } from '../../jobs/queue.js';
import { notifyJobsSql } from '../../jobs/enqueue.js';
import { tenantIs } from '../../tenant-sql.js';

/** Routing passes, grouped by organisation for fair claims. */
export const ROUTE_QUEUE = fairQueue('conversations.route', 'tenant_id');

export type RoutePayload = { tenant_id: string; department_id: string; conversation_id?: string };

/**
 * A CTE queuing a route job for each row of `rows` (an SQL relation with tenant_id, department_id and
 * assignee_id) that is unassigned in a department with routing; `conversation_id` when given (a column
 * of `rows`) asks that conversation to be placed even if it is not waiting.
 */
export function routeConversationsCte(name: string, rows: Prisma.Sql, withConversation = false): Prisma.Sql {
  return Prisma.sql`${Prisma.raw(name)} AS (
    INSERT INTO jobs (queue, payload, group_key)
    SELECT ${ROUTE_QUEUE.queue}::text, jsonb_build_object('tenant_id', r.tenant_id::text, 'department_id', r.department_id::text
      ${withConversation ? Prisma.sql`, 'conversation_id', r.id::text` : Prisma.empty}), r.tenant_id::text
    FROM ${rows} AS r JOIN departments d ON d.tenant_id = r.tenant_id AND d.id = r.department_id
    WHERE r.assignee_id IS NULL AND d.routing <> 'manual' AND ${
      withConversation ? Prisma.sql`TRUE` : Prisma.sql`NOT ${pendingPass(Prisma.sql`d`)}`
    }
    RETURNING id)`;
}

/**
 * Whether the department (alias) has a pass queued and not yet started: it will see this change too (it
 * reads the queue when it runs, after this commits), so no second one is queued. A pass already running
 * may have read the queue before: then one more is queued. Two changes committing at once may each queue
 * one; a pass with nothing to do costs two statements.
 */
const pendingPass = (d: Prisma.Sql) => Prisma.sql`EXISTS (
      SELECT 1 FROM jobs j WHERE j.queue = ${ROUTE_QUEUE.queue}::text AND j.group_key = ${d}.tenant_id::text AND j.locked_until IS NULL
        AND j.failed_at IS NULL AND j.payload->>'department_id' = ${d}.id::text AND NOT j.payload ? 'conversation_id')`;

/**
 * Queues a routing pass of every department with routing that `which` names: one department, or those a
 * user is a member of (who came online, or whose capacity was freed or raised).
 */
export async function queueRouting(
  tx: Pick<TenantTx, '$tenantQuery'>,
  which: { departmentId: string } | { userId: string },
): Promise<void> {
  await tx.$tenantQuery(
    (tenant) => Prisma.sql`
    WITH queued AS (
      INSERT INTO jobs (queue, payload, group_key)
      SELECT ${ROUTE_QUEUE.queue}::text, jsonb_build_object('tenant_id', d.tenant_id::text, 'department_id', d.id::text), d.tenant_id::text
      FROM departments d
      WHERE ${tenantIs(tenant, 'd')} AND d.routing <> 'manual' AND NOT ${pendingPass(Prisma.sql`d`)} AND ${
        'departmentId' in which
          ? Prisma.sql`d.id = ${which.departmentId}::uuid`
          : Prisma.sql`EXISTS (SELECT 1 FROM department_members m WHERE m.tenant_id = d.tenant_id AND m.department_id = d.id AND m.user_id = ${which.userId}::uuid)`
      }
      RETURNING id)
    SELECT count(*)::int AS n, ${notifyJobsSql(tenant)} FROM queued`,
  );
}
