// POST /backend/messages/send-template: an approved template sent to a lead, whatever the 24-hour
// window. The body's placeholders are filled from `parameters` (keyed like a cadence association's
// parameter_mapping: literals or the documented {{VARIABLE}}s, rendered for the lead); every one must get
// a non-empty value. The message is stored `pending` with the rendered body as its content, the template
// and the values in order, in the lead's open conversation (the channel chosen as for a text), and
// delivered by the `messages.deliver` job as the Cloud API's template message.
import type { Context } from '../../context/context.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import type { Lead, Template } from '../../generated/prisma/client.js';
import { invalidField, notFound } from '../../errors.js';
import { requireTenant } from '../../auth/viewer.js';
import { appendMessage } from '../messaging/store.js';
import { assertReachable, chooseChannel, conversationToWrite, queueDelivery, visibleOpenConversation } from '../messaging/send.js';
import { validMapping } from './mapping.js';
import { bodyPlaceholdersOf, renderTemplate, resolveParameters } from './render.js';

export interface SendTemplateInput {
  lead_id: string;
  template_id: string;
  parameters?: Record<string, unknown> | null;
  channel_id?: string | null;
}

export async function sendTemplate(ctx: Context, input: SendTemplateInput) {
  requireTenant(ctx.viewer);
  return ctx.db.$transaction(async (tx) => {
    const lead = await tx.lead.findUnique({ where: { id: input.lead_id } });
    if (!lead) throw notFound('Lead');
    const template = await tx.template.findUnique({ where: { id: input.template_id } });
    if (!template) throw notFound('Template');
    return storeTemplateMessage(tx, ctx.config, {
      lead,
      template,
      parameters: input.parameters,
      channelId: input.channel_id,
      answers: true,
    });
  });
}

/**
 * A template message for a lead, stored `pending` and queued for delivery in the caller's transaction:
 * the rules of a send-template request, which a cadence step's messages follow too (AppErrors: no
 * recipient, a template not APPROVED, a missing or empty value, no usable channel).
 */
export async function storeTemplateMessage(
  tx: TenantTx,
  config: Context['config'],
  input: {
    lead: Lead;
    template: Template;
    parameters?: Record<string, unknown> | null;
    channelId?: string | null;
    /** A send of the API's (it answers the customer: first response, no longer waiting); a cadence's is not. */
    answers?: boolean;
  },
) {
  const { lead, template } = input;
  assertReachable(lead);
  if (template.status !== 'APPROVED') throw invalidField('template_id', `deve ser um template APPROVED (este está ${template.status})`);
  // The channel before the values: another organisation's channel is refused as an unknown one is.
  const open = await visibleOpenConversation(tx, lead.id);
  const channel = await chooseChannel(tx, input.channelId, open?.channel_id);
  const mapping = validMapping(input.parameters, template.components, 'parameters');
  const values = resolveParameters(mapping, lead);
  const placeholders = bodyPlaceholdersOf(template.components);
  for (const n of placeholders) {
    if (!Object.hasOwn(mapping, n)) throw invalidField(`parameters.${n}`, `é obrigatório: o corpo do template usa {{${n}}}`);
    if (!values[n].trim()) throw invalidField(`parameters.${n}`, 'fica vazio para este lead');
  }
  const conversation = await conversationToWrite(tx, lead, open, channel);
  const message = await appendMessage(tx, config, conversation, {
    role: 'assistant',
    status: 'pending',
    type: 'template',
    content: renderTemplate(template.components, mapping, lead),
    channel_id: channel.id,
    template: { id: template.id, parameters: placeholders.map((n) => values[n]) },
    answers: input.answers,
  });
  await queueDelivery(tx, message);
  return message;
}
