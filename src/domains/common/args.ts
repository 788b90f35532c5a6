// Argument sets shared by the domains' root fields.
import { builder } from '../../schema/builder.js';

/** The `{id}` argument of operations on one record (a REST path's `:id`). */
export const idArg = (description: string) => builder.args((t) => ({ id: t.field({ type: 'UUID', required: true, description }) }));
