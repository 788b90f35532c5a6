// Fills a template for one lead: the parameter_mapping values get the lead's data in place of the
// documented variables, then the template's numbered placeholders `{{n}}` get those values. The preview
// uses it, and a cadence send is meant to use the same functions, so what is previewed is what is sent.
// Output is bounded while it is built: a body repeating a placeholder mapped to long values would
// otherwise grow to gigabytes before anything could refuse it.
import { invalidInput } from '../../errors.js';

/** What rendering reads from a lead. */
export interface LeadForRender {
  name: string;
  surname: string | null;
  phone: string | null;
  company: string | null;
  custom_fields: unknown;
}

const PLACEHOLDER = /\{\{(\d+)\}\}/g;
const VARIABLE = /\{\{([^{}]*)\}\}/g;
const FIELD_PREFIX = 'LEAD_FIELD_';
/** The custom_fields key rule (decisions.md "Input rules"). */
const FIELD_KEY = /^[A-Za-z0-9_]{1,64}$/;
/** The longest text a rendering may produce (decisions.md "Bounded work"), in UTF-16 code units. */
export const MAX_RENDERED_LENGTH = 64 * 1024;

const tooLong = () => invalidInput(`A mensagem renderizada passa de ${MAX_RENDERED_LENGTH / 1024} KB`);

/** `text.replace(pattern, replace)` that refuses as soon as the result would pass `budget` characters. */
function replaceBounded(text: string, pattern: RegExp, replace: (token: string, name: string) => string, budget: number): string {
  let out = '';
  let last = 0;
  for (const m of text.matchAll(pattern)) {
    const piece = text.slice(last, m.index) + replace(m[0], m[1]);
    if (out.length + piece.length > budget) throw tooLong();
    out += piece;
    last = m.index + m[0].length;
  }
  if (out.length + text.length - last > budget) throw tooLong();
  return out + text.slice(last);
}

const LEAD_VARIABLES: Record<string, (lead: LeadForRender) => string> = {
  LEAD_NAME: (lead) =>
    [lead.name, lead.surname ?? '']
      .map((s) => s.trim())
      .filter(Boolean)
      .join(' '),
  LEAD_FIRSTNAME: (lead) => lead.name.trim().split(/\s+/)[0] ?? '',
  LEAD_NUMBER: (lead) => lead.phone ?? '',
  COMPANY_NAME: (lead) => lead.company ?? '',
};

function customField(lead: LeadForRender, key: string): string {
  const fields = lead.custom_fields;
  if (!fields || typeof fields !== 'object' || !Object.hasOwn(fields, key)) return '';
  const value = (fields as Record<string, unknown>)[key];
  if (value == null) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value as string | number | boolean);
}

/** Whether the name between the braces is a documented variable: one of the lead fields, or LEAD_FIELD_<key>. */
function isVariable(name: string): boolean {
  if (Object.hasOwn(LEAD_VARIABLES, name)) return true;
  return name.startsWith(FIELD_PREFIX) && FIELD_KEY.test(name.slice(FIELD_PREFIX.length));
}

/** The `{{…}}` tokens of a mapping value that are not documented variables, as written. */
export function unknownVariables(value: string): string[] {
  return [...value.matchAll(VARIABLE)].filter((m) => !isVariable(m[1])).map((m) => m[0]);
}

/** The numbers of the placeholders in the components' `text`, ascending, each once. */
export function placeholdersOf(components: unknown): string[] {
  const found = new Set<string>();
  for (const text of texts(components)) for (const m of text.matchAll(PLACEHOLDER)) found.add(m[1]);
  return [...found].sort((a, b) => Number(a) - Number(b) || a.localeCompare(b));
}

/** The numbers of the placeholders of the body (its BODY components), ascending, each once: what a send must fill. */
export function bodyPlaceholdersOf(components: unknown): string[] {
  return placeholdersOf(texts(components, 'BODY').map((text) => ({ text })));
}

function texts(components: unknown, type?: string): string[] {
  if (!Array.isArray(components)) return [];
  return components
    .filter(
      (c): c is { type?: unknown; text: string } => !!c && typeof c === 'object' && typeof (c as { text?: unknown }).text === 'string',
    )
    .filter((c) => type === undefined || (typeof c.type === 'string' && c.type.toUpperCase() === type))
    .map((c) => c.text);
}

/**
 * Each mapped placeholder's value for a lead. Variables are replaced in one pass, so a lead's data that
 * happens to look like `{{…}}` is never read as a variable.
 */
export function resolveParameters(mapping: Record<string, string>, lead: LeadForRender): Record<string, string> {
  const resolved: Record<string, string> = {};
  for (const [placeholder, value] of Object.entries(mapping)) {
    resolved[placeholder] = replaceBounded(
      value,
      VARIABLE,
      (token, name) => {
        if (Object.hasOwn(LEAD_VARIABLES, name)) return LEAD_VARIABLES[name](lead);
        if (isVariable(name)) return customField(lead, name.slice(FIELD_PREFIX.length));
        return token;
      },
      MAX_RENDERED_LENGTH,
    );
  }
  return resolved;
}

/**
 * The template's body (its BODY components' text) for a lead: each placeholder replaced by its mapped
 * value; a placeholder without a mapping stays as written, so a preview shows what is missing.
 * Longer than MAX_RENDERED_LENGTH → 400, refused before the text grows past it.
 */
export function renderTemplate(components: unknown, mapping: Record<string, string>, lead: LeadForRender): string {
  const parameters = resolveParameters(mapping, lead);
  let out = '';
  for (const text of texts(components, 'BODY')) {
    const budget = MAX_RENDERED_LENGTH - out.length - (out ? 1 : 0);
    const rendered = replaceBounded(text, PLACEHOLDER, (token, n) => (Object.hasOwn(parameters, n) ? parameters[n] : token), budget);
    out = out ? `${out}\n${rendered}` : rendered;
  }
  return out;
}
