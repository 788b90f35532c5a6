// Input checks shared by services. Each throws INVALID_INPUT with a Portuguese message naming the field.
import { invalidField } from '../../errors.js';

export function requiredText(field: string, value: string | null | undefined, max = 255): string {
  const v = value?.trim();
  if (!v) throw invalidField(field, 'é obrigatório');
  if (v.length > max) throw invalidField(field, `aceita no máximo ${max} caracteres`);
  return v;
}

export function optionalText(field: string, value: string | null | undefined, max = 1000): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === null) return null;
  const v = value.trim();
  if (v.length > max) throw invalidField(field, `aceita no máximo ${max} caracteres`);
  return v;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export function optionalEmail(value: string | null | undefined): string | null | undefined {
  const v = optionalText('email', value, 254);
  if (v && !EMAIL.test(v)) throw invalidField('email', 'deve ser um endereço de e-mail válido');
  return v === '' ? null : v;
}

const HEX_COLOR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/;
export function hexColor(value: string): string {
  if (!HEX_COLOR.test(value)) throw invalidField('color', 'deve ser uma cor hexadecimal, por exemplo #22c55e');
  return value;
}
