// Department routing: the `conversations.route` queue hands a department's waiting, unassigned open
// conversations (oldest `waiting_since` first) to its online members under capacity: `round_robin`
// takes the members in turn (the one after the department's last assignee), `balanced` the one with the
// fewest open conversations assigned in the organisation (ties: the longest since their last
// assignment). A job queued for a new conversation places that one too, waiting or not.
//
// Correct across processes by locks, in one order: the department (one pass per department at a time),
// the conversation (SKIP LOCKED: a manual assignment in progress is left to finish), then the eligible
// members' user rows, in id order; their open conversations are counted by the next statement, whose
// snapshot comes after the locks, so a member assigned by another department's pass or a manual
// assignment meanwhile is counted. Nobody is ever put over capacity by routing.
import { Prisma } from '../../generated/prisma/client.js';
import type { Config } from '../../config.js';
import { tenantClientsOf, type TenantTx } from '../../db/tenant-scope.js';
import { emit } from '../../events/emit.js';
import { defineQueue, type QueueDeps } from '../../jobs/queue.js';
import { enqueue } from '../../jobs/enqueue.js';
import { tenantIs } from '../../tenant-sql.js';
import { announceAssignment } from './assignment.js';
import { ROUTE_QUEUE, type RoutePayload } from './routing-queue.js';

/** Conversations one pass assigns at most; a pass that assigned this many queues the next one. */
export const ROUTE_BATCH = 50;

interface Candidate {
  id: string;
  capacity: number | null;
  open: number;
  last_assigned_at: Date | null;
  joined_at: Date;
}

/** The member a conversation goes to, by the department's rule, among the eligible (under capacity). */
export function pickMember(routing: 'round_robin' | 'balanced', candidates: Candidate[], lastAssigneeId: string | null): Candidate | null {
  const free = candidates.filter((c) => c.capacity === null || c.open < c.capacity);
  if (!free.length) return null;
  if (routing === 'balanced') {
    return [...free].sort(
      (a, b) =>
        a.open - b.open ||
        (a.last_assigned_at?.getTime() ?? -Infinity) - (b.last_assigned_at?.getTime() ?? -Infinity) ||
        a.id.localeCompare(b.id),
    )[0];
  }
  // In turn: the members in the order they joined; the next free one after the last assignee.
  const order = [...candidates].sort((a, b) => a.joined_at.getTime() - b.joined_at.getTime() || a.id.localeCompare(b.id));
  const last = order.findIndex((c) => c.id === lastAssigneeId);
  for (let i = 1; i <= order.length; i++) {
    const next = order[(last + i + order.length) % order.length];
    if (free.includes(next)) return next;
  }
  return null;
}

/** The department's online members, locked, with their open conversations counted after the lock. */
async function candidates(tx: TenantTx, departmentId: string): Promise<Candidate[]> {
  const locked = await tx.$tenantQuery<{ id: string; joined_at: Date }[]>(
    (tenant) => Prisma.sql`
    SELECT u.id::text AS id, m.created_at AS joined_at FROM department_members m
    JOIN users u ON u.tenant_id = m.tenant_id AND u.id = m.user_id
    WHERE ${tenantIs(tenant, 'm')} AND m.department_id = ${departmentId}::uuid AND u.availability = 'online' AND u.deleted_at IS NULL
    ORDER BY u.id
    FOR UPDATE OF u`,
  );
  if (!locked.length) return [];
  const counted = await tx.$tenantQuery<{ id: string; capacity: number | null; open: number; last_assigned_at: Date | null }[]>(
    (tenant) => Prisma.sql`
    SELECT u.id::text AS id, u.capacity, u.last_assigned_at,
      (SELECT count(*)::int FROM conversations c WHERE c.tenant_id = u.tenant_id AND c.assignee_id = u.id AND c.status = 'active') AS open
    FROM users u
    WHERE ${tenantIs(tenant, 'u')} AND u.id = ANY(${locked.map((l) => l.id)}::uuid[]) AND u.availability = 'online' AND u.deleted_at IS NULL`,
  );
  const joined = new Map(locked.map((l) => [l.id, l.joined_at]));
  return counted.map((c) => ({ ...c, joined_at: joined.get(c.id)! }));
}

/** One pass over a department's queue: how many it assigned. */
async function routeDepartment(tx: TenantTx, config: Config, payload: RoutePayload): Promise<number> {
  const [department] = await tx.$tenantQuery<{ routing: string; last_assignee_id: string | null }[]>(
    (tenant) => Prisma.sql`
    SELECT routing::text AS routing, last_assignee_id::text AS last_assignee_id FROM departments
    WHERE ${tenantIs(tenant)} AND id = ${payload.department_id}::uuid FOR UPDATE`,
  );
  if (!department || department.routing === 'manual') return 0;
  const routing = department.routing as 'round_robin' | 'balanced';
  let lastAssignee = department.last_assignee_id;
  let assigned = 0;
  let pool: Candidate[] | null = null;
  for (let n = 0; n < ROUTE_BATCH; n++) {
    const asked = n === 0 && payload.conversation_id;
    const [conversation] = await tx.$tenantQuery<{ id: string }[]>(
      (tenant) => Prisma.sql`
      SELECT id::text AS id FROM conversations
      WHERE ${tenantIs(tenant)} AND department_id = ${payload.department_id}::uuid AND status = 'active' AND assignee_id IS NULL
        AND ${asked ? Prisma.sql`id = ${payload.conversation_id}::uuid` : Prisma.sql`waiting_since IS NOT NULL`}
      ORDER BY waiting_since, id LIMIT 1
      FOR UPDATE SKIP LOCKED`,
    );
    if (!conversation) {
      if (asked) continue;
      break;
    }
    pool ??= await candidates(tx, payload.department_id);
    const member = pickMember(routing, pool, lastAssignee);
    if (!member) break;
    await tx.$tenantQuery(
      (tenant) => Prisma.sql`UPDATE conversations SET assignee_id = ${member.id}::uuid, updated_at = now()
      WHERE ${tenantIs(tenant)} AND id = ${conversation.id}::uuid`,
    );
    await tx.$tenantQuery(
      (tenant) => Prisma.sql`UPDATE users SET last_assigned_at = now() WHERE ${tenantIs(tenant)} AND id = ${member.id}::uuid`,
    );
    member.open++;
    member.last_assigned_at = new Date();
    lastAssignee = member.id;
    await emit(tx, 'conversation.assigned', { id: conversation.id, assignee_id: member.id, previous_assignee_id: null });
    await announceAssignment(tx, config, conversation.id);
    assigned++;
  }
  if (assigned)
    await tx.$tenantQuery(
      (tenant) =>
        Prisma.sql`UPDATE departments SET last_assignee_id = ${lastAssignee}::uuid WHERE ${tenantIs(tenant)} AND id = ${payload.department_id}::uuid`,
    );
  // More may wait: the next pass, as a job of its own (other organisations' passes are claimed between).
  if (assigned === ROUTE_BATCH)
    await enqueue(tx, ROUTE_QUEUE, { tenant_id: payload.tenant_id, department_id: payload.department_id } satisfies RoutePayload);
  return assigned;
}

/** An organisation's routing passes at once, across every process: half of a process's job slots. */
const passesPerOrganisation = (config: Pick<Config, 'workerConcurrency'>) => Math.max(1, Math.ceil(config.workerConcurrency / 2));

export const routingQueue = ({ db, config }: QueueDeps) =>
  defineQueue<RoutePayload>({
    name: ROUTE_QUEUE,
    fairness: { perKey: passesPerOrganisation(config) },
    handler: async (payload) => {
      const scoped = tenantClientsOf(db.prisma, db.direct, db.oneSnapshot).for(payload.tenant_id);
      await scoped.$transaction((tx) => routeDepartment(tx, config, payload));
    },
  });
