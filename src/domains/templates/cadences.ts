// Cadences: named sequences of steps whose messages are templates (associations.ts). Operators read;
// owner/admin create.
import type { Context } from '../../context/context.js';
import { requiredText } from '../common/validate.js';
import type { Selection } from '../common/types.js';

export function listCadences(ctx: Context, query: Selection = {}) {
  return ctx.db.cadence.findMany({ ...query, orderBy: [{ created_at: 'asc' }, { id: 'asc' }] });
}

export function createCadence(ctx: Context, input: { name: string }, query: Selection = {}) {
  return ctx.db.cadence.create({ ...query, data: { name: requiredText('name', input.name, 255) } });
}
