// Fills a template for one lead: the parameter_mapping values get the lead's data in place of the
// documented variables, then the template's numbered placeholders `{{n}}` get those values. The preview
// uses it, and a cadence send is meant to use the same functions, so what is previewed is what is sent.

/** What rendering reads from a lead. */
export interface LeadForRender {
  name: string;
  surname: string | null;
  phone: string;
  company: string | null;
  custom_fields: unknown;
}

const PLACEHOLDER = /\{\{(\d+)\}\}/g;
const VARIABLE = /\{\{([^{}]*)\}\}/g;
const FIELD_PREFIX = 'LEAD_FIELD_';
/** The custom_fields key rule (decisions.md "Input rules"). */
const FIELD_KEY = /^[A-Za-z0-9_]{1,64}$/;

const LEAD_VARIABLES: Record<string, (lead: LeadForRender) => string> = {
  LEAD_NAME: (lead) => [lead.name, lead.surname ?? ''].map((s) => s.trim()).filter(Boolean).join(' '),
  LEAD_FIRSTNAME: (lead) => lead.name.trim().split(/\s+/)[0] ?? '',
  LEAD_NUMBER: (lead) => lead.phone,
  COMPANY_NAME: (lead) => lead.company ?? '',
};

function customField(lead: LeadForRender, key: string): string {
  const fields = lead.custom_fields;
  if (!fields || typeof fields !== 'object' || !Object.hasOwn(fields, key)) return '';
  const value = (fields as Record<string, unknown>)[key];
  return value == null ? '' : String(value);
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

function texts(components: unknown, type?: string): string[] {
  if (!Array.isArray(components)) return [];
  return components
    .filter((c): c is { type?: unknown; text: string } => !!c && typeof c === 'object' && typeof (c as { text?: unknown }).text === 'string')
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
    resolved[placeholder] = value.replace(VARIABLE, (token, name: string) => {
      if (Object.hasOwn(LEAD_VARIABLES, name)) return LEAD_VARIABLES[name](lead);
      if (isVariable(name)) return customField(lead, name.slice(FIELD_PREFIX.length));
      return token;
    });
  }
  return resolved;
}

/**
 * The template's body (its BODY components' text) for a lead: each placeholder replaced by its mapped
 * value; a placeholder without a mapping stays as written, so a preview shows what is missing.
 */
export function renderTemplate(components: unknown, mapping: Record<string, string>, lead: LeadForRender): string {
  const parameters = resolveParameters(mapping, lead);
  return texts(components, 'BODY')
    .map((text) => text.replace(PLACEHOLDER, (token, n: string) => (Object.hasOwn(parameters, n) ? parameters[n] : token)))
    .join('\n');
}
