// WhatsApp's customer-service window: for 24 hours after a customer's last message a business may
// answer freely; after it, the Cloud API accepts only templates. Funil refuses such a send itself
// (422 WINDOW_CLOSED) before anything is stored or sent, on whatsapp_cloud channels only: the other
// providers do not have the rule.
import { AppError } from '../../errors.js';
import type { Channel, Conversation } from '../../generated/prisma/client.js';

export const WINDOW_MS = 24 * 60 * 60 * 1000;

/** When the conversation's window closes (its last inbound message + 24 h); null before any inbound message. */
export function windowExpiresAt(conversation: Pick<Conversation, 'last_inbound_at'>): Date | null {
  return conversation.last_inbound_at ? new Date(conversation.last_inbound_at.getTime() + WINDOW_MS) : null;
}

/** Whether free text and media may go through this channel into this conversation (none yet: a new one, never written to). */
export function windowOpen(
  channel: Pick<Channel, 'provider'>,
  conversation: Pick<Conversation, 'last_inbound_at'> | null,
  now = new Date(),
): boolean {
  if (channel.provider !== 'whatsapp_cloud') return true;
  const expires = conversation && windowExpiresAt(conversation);
  return expires !== null && expires.getTime() > now.getTime();
}

/** 422 WINDOW_CLOSED when a free-text or media send may not go through (windowOpen). */
export function assertWindowOpen(channel: Pick<Channel, 'provider'>, conversation: Pick<Conversation, 'last_inbound_at'> | null): void {
  if (windowOpen(channel, conversation)) return;
  throw new AppError(
    'WINDOW_CLOSED',
    'A janela de 24 horas do WhatsApp está fechada (nenhuma mensagem do cliente nas últimas 24 h): envie um template (POST /backend/messages/send-template)',
  );
}
