// Phone numbers on the messaging side: what an inbound `from` becomes, and whether a lead's number can
// receive messages at all (decisions.md: valid for its country, not only E.164-shaped).
import { isValidPhoneNumber } from 'libphonenumber-js/max';
import { AppError, invalidField } from '../../errors.js';

/**
 * An inbound sender as E.164: digits with an optional `+`, separators (spaces, dots, dashes,
 * parentheses) and a WhatsApp `@s.whatsapp.net` suffix allowed; `5511…` becomes `+5511…`.
 * Fewer than 8 or more than 15 digits, or anything else, is refused (400 VALIDATION_ERROR).
 */
export function inboundPhone(from: string): string {
  const compact = from
    .trim()
    .replace(/@s\.whatsapp\.net$/i, '')
    .replace(/[\s().-]/g, '');
  const digits = compact.replace(/^\+/, '');
  if (!/^\d+$/.test(digits)) throw invalidField('from', 'deve ser um número de telefone');
  if (digits.length < 8) throw invalidField('from', 'deve ter ao menos 8 dígitos');
  if (digits.length > 15 || digits.startsWith('0'))
    throw invalidField('from', 'deve ser um número E.164 (código do país e até 15 dígitos)');
  return `+${digits}`;
}

/** Whether a stored E.164 number can exist for its country (libphonenumber-js, full metadata). */
export function canReceiveMessages(phone: string): boolean {
  return isValidPhoneNumber(phone);
}

/**
 * A media message's `remote_jid` as E.164: the recipient's phone, digits with an optional `+` and an
 * optional WhatsApp `@s.whatsapp.net` suffix (separators allowed as for inbound `from`). Anything that
 * is not a number able to receive messages (a group jid, text, a number no country has) → 400 INVALID_PHONE.
 */
export function recipientPhone(remoteJid: string): string {
  const compact = remoteJid
    .trim()
    .replace(/@s\.whatsapp\.net$/i, '')
    .replace(/[\s().-]/g, '');
  const phone = /^\+?[1-9]\d{7,14}$/.test(compact) ? `+${compact.replace(/^\+/, '')}` : null;
  if (!phone || !canReceiveMessages(phone)) {
    throw new AppError(
      'INVALID_PHONE',
      'O campo remote_jid deve ser o telefone de quem recebe, com código do país (dígitos, + e @s.whatsapp.net opcionais)',
    );
  }
  return phone;
}
