// Sending through a channel's provider. `test` accepts every send. `whatsapp_cloud` posts the WhatsApp
// Cloud API message to `{api_url}/{phone_number_id}/messages` with the channel's bearer token
// (decisions.md "Messaging and channels"): a text, or a media object that names the file by `link`
// (its public media proxy address: the provider downloads it). The outcome says whether to record the
// message as sent, retry later, or give up with the provider's error.
import { randomUUID } from 'node:crypto';
import type { Channel } from '../../generated/prisma/client.js';
import { whatsAppConfig } from './channels.js';
import { postJson } from './provider-http.js';

export type SendOutcome =
  { kind: 'sent'; providerMessageId: string | null } | { kind: 'retry'; error: string } | { kind: 'failed'; error: string };

/** What a message hands the provider. */
export type Outgoing =
  | { type: 'text'; text: string }
  | { type: 'image' | 'audio' | 'video' | 'document'; link: string; caption?: string; filename?: string }
  | { type: 'template'; name: string; language: string; parameters: string[] };

export interface SendOptions {
  allowPrivate: boolean;
  timeoutMs?: number;
}

/** The Graph API's error text: `{error: {message, code}}`; never echoes the request. */
function providerError(status: number, body: unknown): string {
  const error = (body as { error?: { message?: unknown; code?: unknown } } | null)?.error;
  const message = typeof error?.message === 'string' ? error.message.slice(0, 500) : undefined;
  const code = typeof error?.code === 'number' || typeof error?.code === 'string' ? ` (código ${error.code})` : '';
  return message ? `WhatsApp HTTP ${status}: ${message}${code}` : `WhatsApp HTTP ${status}`;
}

/** Who a message goes to: the lead's phone, else its WhatsApp user id (BSUID). */
export interface Recipient {
  phone: string | null;
  whatsapp_user_id: string | null;
}

/** The Cloud API message body: `to`, the phone without its `+`; for a lead known by its BSUID alone, `recipient`. */
function cloudMessage(to: Recipient, outgoing: Outgoing): Record<string, unknown> {
  const address = to.phone ? { to: to.phone.replace(/^\+/, '') } : { recipient: to.whatsapp_user_id };
  const envelope = { messaging_product: 'whatsapp', recipient_type: 'individual', ...address, type: outgoing.type };
  if (outgoing.type === 'text') return { ...envelope, text: { preview_url: false, body: outgoing.text } };
  if (outgoing.type === 'template') {
    const body = outgoing.parameters.length
      ? { components: [{ type: 'body', parameters: outgoing.parameters.map((text) => ({ type: 'text', text })) }] }
      : {};
    return { ...envelope, template: { name: outgoing.name, language: { code: outgoing.language }, ...body } };
  }
  const media: Record<string, string> = { link: outgoing.link };
  if (outgoing.caption) media.caption = outgoing.caption;
  if (outgoing.type === 'document' && outgoing.filename) media.filename = outgoing.filename;
  return { ...envelope, [outgoing.type]: media };
}

export async function sendThroughChannel(
  channel: Pick<Channel, 'provider' | 'config'>,
  to: Recipient,
  outgoing: Outgoing,
  options: SendOptions,
): Promise<SendOutcome> {
  if (channel.provider === 'test') return { kind: 'sent', providerMessageId: `test-${randomUUID()}` };
  const config = whatsAppConfig(channel);
  const answer = await postJson({
    url: `${config.api_url}/${encodeURIComponent(config.phone_number_id)}/messages`,
    headers: { authorization: `Bearer ${config.access_token}` },
    body: cloudMessage(to, outgoing),
    allowPrivate: options.allowPrivate,
    timeoutMs: options.timeoutMs,
  });
  if ('networkError' in answer) return { kind: 'retry', error: answer.networkError };
  if (answer.status >= 200 && answer.status < 300) {
    const id = (answer.body as { messages?: { id?: unknown }[] } | null)?.messages?.[0]?.id;
    return { kind: 'sent', providerMessageId: typeof id === 'string' ? id : null };
  }
  // Throttling, timeouts and server errors pass; other refusals (bad number, bad token) do not.
  const transient = answer.status === 408 || answer.status === 429 || answer.status >= 500;
  return { kind: transient ? 'retry' : 'failed', error: providerError(answer.status, answer.body) };
}
