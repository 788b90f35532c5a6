// The one home of phone numbers: what a lead's `phone`, an inbound sender and a media recipient become,
// whether a number can receive messages, and WhatsApp identities beside the phone.
//
// Brazilian mobiles are written with and without their ninth digit (`+55 31 8888-7777` is
// `+55 31 98888-7777`): `+55`, a two-digit area code and 8 digits starting 6-9 are stored, matched and
// de-duplicated with the 9 (landlines, 8 digits starting 2-5, are left as they are). Rows written before
// that rule may still hold the short form: `phoneForms` gives both, for lookups.
import { isValidPhoneNumber } from 'libphonenumber-js/max';
import { AppError, invalidField } from '../../errors.js';

const E164 = /^\+[1-9]\d{7,14}$/;
const BRAZIL_SHORT_MOBILE = /^\+55([1-9]{2})([6-9]\d{7})$/;
const BRAZIL_MOBILE = /^\+55([1-9]{2})9([6-9]\d{7})$/;

/** An E.164 number in its stored form (the Brazilian ninth digit added). */
export function canonicalPhone(e164: string): string {
  const short = BRAZIL_SHORT_MOBILE.exec(e164);
  return short ? `+55${short[1]}9${short[2]}` : e164;
}

/** Every form a stored number may have been written in: the canonical one first. */
export function phoneForms(e164: string): string[] {
  const canonical = canonicalPhone(e164);
  const mobile = BRAZIL_MOBILE.exec(canonical);
  return mobile ? [canonical, `+55${mobile[1]}${mobile[2]}`] : [canonical];
}

/** Separators people write (spaces, dots, dashes, parentheses) and WhatsApp's `@s.whatsapp.net` suffix, gone. */
const compact = (raw: string) =>
  raw
    .trim()
    .replace(/@s\.whatsapp\.net$/i, '')
    .replace(/[\s().-]/g, '');

/** A lead's `phone`: E.164 with its `+` (separators allowed), in its stored form; 400 on `field` otherwise. */
export function leadPhone(raw: string | null | undefined, field = 'phone'): string {
  const trimmed = raw?.trim();
  if (!trimmed) throw invalidField(field, 'é obrigatório');
  const phone = trimmed.replace(/[\s().-]/g, '');
  if (!E164.test(phone)) throw invalidField(field, 'deve estar no formato E.164, com código do país (ex.: +5511999998888)');
  return canonicalPhone(phone);
}

/**
 * An inbound sender as E.164: digits with an optional `+`, separators and a WhatsApp `@s.whatsapp.net`
 * suffix allowed; `5511…` becomes `+5511…`. Fewer than 8 or more than 15 digits, or anything else, is
 * refused (400 VALIDATION_ERROR on `from`).
 */
export function inboundPhone(from: string): string {
  const digits = compact(from).replace(/^\+/, '');
  if (!/^\d+$/.test(digits)) throw invalidField('from', 'deve ser um número de telefone');
  if (digits.length < 8) throw invalidField('from', 'deve ter ao menos 8 dígitos');
  if (digits.length > 15 || digits.startsWith('0'))
    throw invalidField('from', 'deve ser um número E.164 (código do país e até 15 dígitos)');
  return canonicalPhone(`+${digits}`);
}

/** Whether a stored E.164 number can exist for its country (libphonenumber-js, full metadata). */
export function canReceiveMessages(phone: string): boolean {
  return isValidPhoneNumber(phone);
}

/**
 * A media message's `remote_jid` as E.164: the recipient's phone, digits with an optional `+` and an
 * optional `@s.whatsapp.net` suffix (separators allowed). Anything that is not a number able to receive
 * messages (a group jid, text, a number no country has) → 400 INVALID_PHONE.
 */
export function recipientPhone(remoteJid: string): string {
  const digits = compact(remoteJid);
  const phone = /^\+?[1-9]\d{7,14}$/.test(digits) ? canonicalPhone(`+${digits.replace(/^\+/, '')}`) : null;
  if (!phone || !canReceiveMessages(phone)) {
    throw new AppError(
      'INVALID_PHONE',
      'O campo remote_jid deve ser o telefone de quem recebe, com código do país (dígitos, + e @s.whatsapp.net opcionais)',
    );
  }
  return phone;
}

/** Meta's business-scoped user id (BSUID): two capital letters, a dot, 1-128 letters or digits. */
const BSUID = /^[A-Z]{2}\.[A-Za-z0-9]{1,128}$/;

/** A WhatsApp user id as given (trimmed); 400 on `field` when it is not a BSUID. */
export function whatsAppUserId(raw: string, field = 'whatsapp_user_id'): string {
  const id = raw.trim();
  if (!BSUID.test(id))
    throw invalidField(
      field,
      'deve ser um BSUID do WhatsApp: duas letras maiúsculas, um ponto e até 128 letras ou dígitos (ex.: BR.1502576394655843)',
    );
  return id;
}

/** A WhatsApp username for display: trimmed, at most 64 characters; null when empty. */
export function whatsAppUsername(raw: string | null | undefined, field = 'username'): string | null {
  const name = raw?.trim();
  if (!name) return null;
  if (name.length > 64) throw invalidField(field, 'aceita no máximo 64 caracteres');
  return name;
}
