// Departments and their members (bare style; decisions.md: owners and admins manage them, any role
// lists its own). Deleting a department clears channels' and conversations' references in the
// database itself (ON DELETE SET NULL (department_id)); its memberships go with it.
import { queueRouting } from './routing-queue.js';
import { announceDepartmentsChanged } from './live.js';
import { requireTenant } from '../../auth/viewer.js';
import type { Context } from '../../context/context.js';
import { AppError, constraintViolation, invalidField, invalidInput, notFound } from '../../errors.js';
import { lockRow, LOCKING_TX } from '../common/lock.js';
import type { Prisma } from '../../generated/prisma/client.js';
import type { Selection } from '../common/types.js';
import { optionalText, requiredText } from '../common/validate.js';

const NAME_MAX = 100;
const DESCRIPTION_MAX = 1000;
/** Members of one department, at most (decisions.md "Bounded work"): GraphQL counts `members` at this cap. */
export const MEMBERS_MAX = 100;

const duplicateName = () => new AppError('CONFLICT', 'Já existe um departamento com este nome');

/** The database refuses a second department with the same name (also between racing requests). */
async function uniqueName<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (e) {
    if (constraintViolation(e) === 'unique') throw duplicateName();
    throw e;
  }
}

/** Which departments a list shows. */
export interface DepartmentListSource {
  where: Prisma.DepartmentWhereInput;
}

export function listDepartments(_ctx: Context): DepartmentListSource {
  return { where: {} };
}

export function myDepartments(ctx: Context): DepartmentListSource {
  const viewer = requireTenant(ctx.viewer);
  return { where: { members: { some: { user_id: viewer.userId } } } };
}

export type Routing = 'manual' | 'round_robin' | 'balanced';

export function createDepartment(
  ctx: Context,
  input: { name: string; description?: string | null; routing?: Routing | null },
  query: Selection = {},
) {
  const name = requiredText('name', input.name, NAME_MAX);
  const description = optionalText('description', input.description, DESCRIPTION_MAX) ?? null;
  if (input.routing === null) throw invalidField('routing', 'deve ser manual, round_robin ou balanced');
  return uniqueName(() => ctx.db.department.create({ ...query, data: { name, description, routing: input.routing ?? 'manual' } }));
}

/** Changes the fields given; routing turned on calls a pass over the department's waiting conversations. */
export async function updateDepartment(
  ctx: Context,
  id: string,
  input: { name?: string | null; description?: string | null; routing?: Routing | null },
  query: Selection = {},
) {
  const data: { name?: string; description?: string | null; routing?: Routing } = {};
  if (input.name !== undefined) data.name = requiredText('name', input.name, NAME_MAX);
  if (input.description !== undefined) data.description = optionalText('description', input.description, DESCRIPTION_MAX);
  if (input.routing === null) throw invalidField('routing', 'deve ser manual, round_robin ou balanced');
  if (input.routing) data.routing = input.routing;
  await ctx.db.$transaction(async (tx) => {
    const { count } = await uniqueName(() => tx.department.updateMany({ where: { id }, data }));
    if (count === 0) throw notFound('Departamento');
    if (data.routing && data.routing !== 'manual') await queueRouting(tx, { departmentId: id });
  });
  return ctx.db.department.findUniqueOrThrow({ ...query, where: { id } });
}

export async function deleteDepartment(ctx: Context, id: string) {
  const { count } = await ctx.db.department.deleteMany({ where: { id } });
  if (count === 0) throw notFound('Departamento');
  announceDepartmentsChanged(ctx.config, ctx.db.$tenantId);
  return true;
}

async function assertDepartment(ctx: Context, id: string) {
  if (!(await ctx.db.department.findUnique({ where: { id }, select: { id: true } }))) throw notFound('Departamento');
}

export async function listMembers(ctx: Context, id: string) {
  await assertDepartment(ctx, id);
  return { departmentId: id };
}

export async function addMember(ctx: Context, id: string, userId: string) {
  await assertDepartment(ctx, id);
  if (!(await ctx.db.user.findFirst({ where: { id: userId, deleted_at: null }, select: { id: true } }))) throw notFound('Usuário');
  try {
    await ctx.db.$transaction(async (tx) => {
      // Concurrent additions to one department count one after the other, so the cap holds.
      if (!(await lockRow(tx, 'departments', id))) throw notFound('Departamento');
      if ((await tx.departmentMember.count({ where: { department_id: id } })) >= MEMBERS_MAX)
        throw invalidInput(`Um departamento aceita no máximo ${MEMBERS_MAX} membros`);
      await tx.departmentMember.create({ data: { department_id: id, user_id: userId } });
      // A new member may take what waits there.
      await queueRouting(tx, { departmentId: id });
    }, LOCKING_TX);
  } catch (e) {
    const violated = constraintViolation(e);
    if (violated === 'unique') throw new AppError('CONFLICT', 'O usuário já é membro deste departamento');
    // The department or the user was deleted meanwhile.
    if (violated === 'foreign_key') throw notFound('Departamento ou usuário');
    throw e;
  }
  announceDepartmentsChanged(ctx.config, ctx.db.$tenantId);
  return { message: 'Membro adicionado ao departamento' };
}

export async function removeMember(ctx: Context, id: string, userId: string) {
  await assertDepartment(ctx, id);
  const { count } = await ctx.db.departmentMember.deleteMany({ where: { department_id: id, user_id: userId } });
  if (count === 0) throw notFound('Membro');
  announceDepartmentsChanged(ctx.config, ctx.db.$tenantId);
  return true;
}
