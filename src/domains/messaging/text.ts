// Message text: kept as written (no trimming), never blank, at most the WhatsApp text limit.
import { invalidField } from '../../errors.js';

export const MESSAGE_MAX = 4096;

export function messageText(field: string, value: string | null | undefined): string {
  if (value == null || !value.trim()) throw invalidField(field, 'é obrigatório');
  if (value.length > MESSAGE_MAX) throw invalidField(field, `aceita no máximo ${MESSAGE_MAX} caracteres`);
  return value;
}
