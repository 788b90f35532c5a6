// Cadence associations: which template a cadence step's message sends, with its parameter_mapping,
// and the preview of that message for a lead. Operators read and preview; owner/admin write.
import { conflict, constraintViolation, fromDatabaseError, invalidInput, notFound, invalidField } from '../../errors.js';
import type { Context } from '../../context/context.js';
import type { Selection } from '../common/types.js';
import { validMapping } from './mapping.js';
import { renderTemplate } from './render.js';

export interface AssociationInput {
  cadence_id: string;
  step_index: number;
  message_index: number;
  template_id: string;
  parameter_mapping?: Record<string, unknown> | null;
}

function nonNegative(field: string, value: number): number {
  if (value < 0) throw invalidField(field, 'deve ser maior ou igual a zero');
  return value;
}

/** Associations of one cadence (or of the organisation), by cadence, step and message. */
export function listAssociations(ctx: Context, args: { cadence_id?: string | null }, query: Selection = {}) {
  const where = args.cadence_id != null ? { cadence_id: args.cadence_id } : {};
  return ctx.db.cadenceAssociation.findMany({
    ...query,
    where,
    orderBy: [{ cadence_id: 'asc' }, { step_index: 'asc' }, { message_index: 'asc' }],
  });
}

export async function createAssociation(ctx: Context, input: AssociationInput, query: Selection = {}) {
  const step_index = nonNegative('step_index', input.step_index);
  const message_index = nonNegative('message_index', input.message_index);
  const [cadence, template] = await Promise.all([
    ctx.db.cadence.findUnique({ where: { id: input.cadence_id }, select: { id: true } }),
    ctx.db.template.findUnique({ where: { id: input.template_id }, select: { status: true, components: true } }),
  ]);
  if (!cadence) throw notFound('Cadência');
  if (!template) throw notFound('Modelo');
  if (template.status !== 'APPROVED') throw invalidInput('Somente modelos aprovados (APPROVED) podem ser associados a uma cadência');
  const parameter_mapping = validMapping(input.parameter_mapping, template.components);
  try {
    return await ctx.db.cadenceAssociation.create({
      ...query,
      data: { cadence_id: input.cadence_id, template_id: input.template_id, step_index, message_index, parameter_mapping },
    });
  } catch (e) {
    const violated = constraintViolation(e);
    if (violated === 'unique') throw conflict('Já existe um modelo associado a esta mensagem desta etapa da cadência');
    // The cadence or the template was deleted since it was read.
    if (violated === 'foreign_key') throw notFound('Cadência ou modelo');
    throw fromDatabaseError(e);
  }
}

/** Replaces an association's parameter_mapping, checked against its template. */
export async function updateAssociationParams(ctx: Context, id: string, mapping: Record<string, unknown>, query: Selection = {}) {
  const current = await ctx.db.cadenceAssociation.findUnique({ where: { id }, select: { template: { select: { components: true } } } });
  if (!current) throw notFound('Associação');
  const parameter_mapping = validMapping(mapping, current.template.components);
  try {
    return await ctx.db.cadenceAssociation.update({ ...query, where: { id }, data: { parameter_mapping } });
  } catch (e) {
    throw fromDatabaseError(e, 'Associação');
  }
}

export async function deleteAssociation(ctx: Context, id: string) {
  const { count } = await ctx.db.cadenceAssociation.deleteMany({ where: { id } });
  if (count === 0) throw notFound('Associação');
}

/** The association's message for a lead: the template's body with its placeholders filled (render.ts). */
export async function previewAssociation(ctx: Context, id: string, leadId: string): Promise<{ text: string }> {
  const [association, lead] = await Promise.all([
    ctx.db.cadenceAssociation.findUnique({
      where: { id },
      select: { parameter_mapping: true, template: { select: { components: true } } },
    }),
    ctx.db.lead.findUnique({
      where: { id: leadId },
      select: { name: true, surname: true, phone: true, company: true, custom_fields: true },
    }),
  ]);
  if (!association) throw notFound('Associação');
  if (!lead) throw notFound('Lead');
  return { text: renderTemplate(association.template.components, association.parameter_mapping as Record<string, string>, lead) };
}
