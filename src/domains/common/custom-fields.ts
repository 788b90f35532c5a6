// custom_fields (decisions.md "Input rules that hold on every route"): a flat object of at most 100 keys
// matching ^[A-Za-z0-9_]{1,64}$, whose values are strings of at most 2,000 characters, finite numbers,
// booleans or null. Anything else is 400, so no nesting depth, size or unstorable text reaches the database.
import type { Prisma } from '../../generated/prisma/client.js';
import { invalidField } from '../../errors.js';

const MAX_KEYS = 100;
const KEY = /^[A-Za-z0-9_]{1,64}$/;
const MAX_TEXT = 2000;
/** What PostgreSQL's jsonb refuses in text (a NUL, an unpaired UTF-16 surrogate): a 500 if it got there. */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function isFlatValue(value: unknown): boolean {
  if (value === null || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  return typeof value === 'string' && value.length <= MAX_TEXT && !UNSTORABLE.test(value);
}

/** The validated object; undefined stays undefined (field not sent). */
export function customFields(value: unknown): Prisma.InputJsonObject | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidField('custom_fields', 'deve ser um objeto');
  const entries = Object.entries(value);
  if (entries.length > MAX_KEYS) throw invalidField('custom_fields', `aceita no máximo ${MAX_KEYS} chaves`);
  for (const [key, v] of entries) {
    if (!KEY.test(key))
      throw invalidField(
        'custom_fields',
        `tem a chave "${key.slice(0, 64)}": uma chave deve ter de 1 a 64 letras sem acento, dígitos ou _`,
      );
    if (!isFlatValue(v))
      throw invalidField(
        `custom_fields.${key}`,
        `deve ser texto (até ${MAX_TEXT} caracteres, sem caractere nulo), número, booleano ou null`,
      );
  }
  return value as Prisma.InputJsonObject;
}
