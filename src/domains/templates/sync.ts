// Templates sync (POST /backend/templates/sync): the provider's list for one app is upserted by
// (organisation, app, name, language). Every template is checked before anything is written, then the
// whole list goes to the database as ONE statement (INSERT … ON CONFLICT DO UPDATE over a JSON
// parameter): atomic by itself, and the same number of statements for 10 templates or 1,000.
import { Prisma } from '../../generated/prisma/client.js';
import { invalidInput, invalidField } from '../../errors.js';
import type { Context } from '../../context/context.js';
import { requiredText } from '../common/validate.js';

export const TEMPLATE_STATUSES = ['APPROVED', 'PENDING', 'REJECTED'] as const;
export const TEMPLATE_CATEGORIES = ['MARKETING', 'UTILITY', 'AUTHENTICATION'] as const;

const MAX_TEMPLATES = 5000;
const MAX_COMPONENTS = 50;

/** One template as the provider reports it. */
export interface SyncItem {
  id: string;
  name: string;
  language: string;
  status: string;
  category: string;
  components: Record<string, unknown>[];
}

interface SyncRow {
  template_id: string;
  template_name: string;
  language: string;
  status: string;
  category: string;
  components: Record<string, unknown>[];
}

function oneOf(field: string, value: string, allowed: readonly string[]): string {
  if (!allowed.includes(value)) throw invalidField(field, `deve ser ${allowed.slice(0, -1).join(', ')} ou ${allowed[allowed.length - 1]}`);
  return value;
}

/** Components are stored as sent; each needs a `type`, and a `text` when present is text. */
function validComponents(field: string, components: Record<string, unknown>[]): Record<string, unknown>[] {
  if (!Array.isArray(components)) throw invalidField(field, 'deve ser uma lista');
  if (components.length > MAX_COMPONENTS) throw invalidField(field, `aceita no máximo ${MAX_COMPONENTS} componentes`);
  components.forEach((component, i) => {
    if (!component || typeof component !== 'object' || Array.isArray(component)) throw invalidField(`${field}[${i}]`, 'deve ser um objeto');
    if (typeof component.type !== 'string' || !component.type.trim()) throw invalidField(`${field}[${i}].type`, 'é obrigatório');
    if (component.text != null && typeof component.text !== 'string') throw invalidField(`${field}[${i}].text`, 'deve ser um texto');
  });
  return components;
}

function validItem(item: SyncItem, i: number): SyncRow {
  const at = `templates[${i}]`;
  return {
    template_id: requiredText(`${at}.id`, item.id, 255),
    template_name: requiredText(`${at}.name`, item.name, 512),
    language: requiredText(`${at}.language`, item.language, 20),
    status: oneOf(`${at}.status`, item.status, TEMPLATE_STATUSES),
    category: oneOf(`${at}.category`, item.category, TEMPLATE_CATEGORIES),
    components: validComponents(`${at}.components`, item.components),
  };
}

/** Every template checked (400 naming the first bad one), and no (name, language) twice. */
function validRows(templates: SyncItem[]): SyncRow[] {
  if (templates.length > MAX_TEMPLATES) throw invalidInput(`Uma sincronização aceita no máximo ${MAX_TEMPLATES} modelos`);
  const rows = templates.map(validItem);
  const seen = new Set<string>();
  for (const row of rows) {
    const key = JSON.stringify([row.template_name, row.language]);
    if (seen.has(key)) throw invalidInput(`O modelo ${row.template_name} (${row.language}) aparece mais de uma vez na sincronização`);
    seen.add(key);
  }
  return rows;
}

export async function syncTemplates(
  ctx: Context,
  input: { app_id: string; templates: SyncItem[] },
): Promise<{ synced_count: number; app_id: string }> {
  const appId = requiredText('app_id', input.app_id, 255);
  const rows = validRows(input.templates);
  if (!rows.length) return { synced_count: 0, app_id: appId };
  const [{ n }] = await ctx.db.$tenantQuery<{ n: number }[]>(
    (tenant) => Prisma.sql`
    WITH synced AS (
      INSERT INTO templates (tenant_id, provider_app_id, template_name, language, template_id, status, category, components, last_synced_at)
      SELECT ${tenant}, ${appId}, t.template_name, t.language, t.template_id, t.status::"TemplateStatus", t.category::"TemplateCategory", t.components, now()
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        AS t(template_name text, language text, template_id text, status text, category text, components jsonb)
      ON CONFLICT (tenant_id, provider_app_id, template_name, language) DO UPDATE
        SET template_id = EXCLUDED.template_id, status = EXCLUDED.status, category = EXCLUDED.category,
            components = EXCLUDED.components, last_synced_at = EXCLUDED.last_synced_at
      RETURNING 1
    )
    SELECT count(*)::int AS n FROM synced`,
  );
  return { synced_count: Number(n), app_id: appId };
}
