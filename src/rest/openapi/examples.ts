// Examples for the API reference, made from the schemas themselves so they always match them (a test
// validates each one): a value per type, format and enum, with plausible words for common property
// names. Ids are fixed UUIDs, numbered in the order they are met, so the document stays deterministic.
import type { JsonSchema } from '../../domains/manifest.js';

const NAMED: Record<string, unknown> = {
  name: 'Vendas',
  surname: 'Souza',
  company: 'Acme Ltda',
  avatar_url: 'https://example.com/avatars/ana.png',
  event: 'lead.created',
  language: 'pt_BR',
  title: 'Proposta enviada',
  phone: '+5511987650001',
  email: 'ana@example.com',
  color: '#3b82f6',
  content: 'Olá! Podemos conversar amanhã?',
  message: 'Olá! Podemos conversar amanhã?',
  text: 'Olá! Podemos conversar amanhã?',
  description: 'Clientes do plano anual',
  note: 'Ligar depois das 14h',
  url: 'https://example.com/webhooks/funil',
  source_url: 'https://example.com/precos',
  file_url: 'https://funil.example.com/media/proxy/2026/01/5f2b7c1e9a4d4c3b8e6f0a1b2c3d4e5f.png',
  media_url: 'https://funil.example.com/media/proxy/2026/01/5f2b7c1e9a4d4c3b8e6f0a1b2c3d4e5f.png',
  filename: 'proposta',
  mime_type: 'image/png',
  folder: 'propostas/2026',
  remote_jid: '5511987650001',
  key: 'fnl_3kq9v2m8x7c4n1b6z5l0p2r8t4y6w1s3d9f7h5',
  secret: 'whsec_MfKQ9r8GKjjq3lW9fN7bq8M5Zp1sY2c3',
  currency: 'BRL',
  period: '30d',
  search: 'Ana',
  query: 'preço do plano anual',
  code: 'NOT_FOUND',
};

/** `name` by the type that holds it (a component, or the record an operation creates or changes). */
const NAME_OF: Record<string, string> = {
  Lead: 'Ana Souza',
  User: 'Ana Souza',
  ViewerUser: 'Ana Souza',
  DepartmentMember: 'Ana Souza',
  ConversationLead: 'Ana Souza',
  DealNewLeadInput: 'Ana Souza',
  Tenant: 'Acme Ltda',
  ViewerTenant: 'Acme Ltda',
  Pipeline: 'Vendas',
  PipelineGroup: 'Comercial',
  Stage: 'Proposta enviada',
  ConfigStage: 'Proposta enviada',
  Tag: 'VIP',
  LeadStatus: 'Qualificado',
  Product: 'Plano anual',
  DealProduct: 'Plano anual',
  DealProductInput: 'Plano anual',
  Department: 'Suporte',
  Channel: 'WhatsApp principal',
  Assistant: 'Atendente virtual',
  KnowledgeItem: 'Tabela de preços',
  Template: 'boas_vindas',
  Cadence: 'Boas-vindas',
  ApiKey: 'Integração ERP',
  ViewerApiKey: 'Integração ERP',
  Webhook: 'ERP interno',
};

/** The record an operation creates or changes: `createLead` → `Lead`. */
export const recordOf = (operationId: string) => operationId.replace(/^(create|update|add|set|post|put)/, '');

const DATE_TIME = '2026-01-15T13:45:00.000Z';

export class ExampleMaker {
  private ids = 0;

  constructor(private readonly components: Record<string, JsonSchema>) {}

  /**
   * A value valid against `schema`; `name` is the property that holds it, if any; `request` keeps optional
   * keys out; `record` is the type the value belongs to (a component's name), for its words.
   */
  of(schema: JsonSchema | undefined, name = '', request = false, record = '', seen: readonly string[] = []): unknown {
    if (!schema) return {};
    if (typeof schema.$ref === 'string') {
      const component = schema.$ref.split('/').pop()!;
      // A type that holds itself stops at its first repetition (its nullable or empty form).
      if (seen.includes(component)) return null;
      return this.of(this.components[component], name, request, component, [...seen, component]);
    }
    if ('const' in schema) return schema.const;
    if (Array.isArray(schema.enum)) return schema.enum[0];
    if (Array.isArray(schema.anyOf) || Array.isArray(schema.oneOf)) {
      const branches = (schema.anyOf ?? schema.oneOf) as JsonSchema[];
      const value = branches.find((b) => b.type !== 'null');
      return value ? this.of(value, name, request, record, seen) : null;
    }
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string | undefined];
    const type = types.find((t) => t !== 'null') ?? (types.includes('null') ? 'null' : undefined);
    switch (type) {
      case 'null':
        return null;
      case 'object':
        return this.object(schema, request, record, seen);
      case 'array': {
        const count = Math.max(1, Number(schema.minItems ?? 1));
        return Array.from({ length: count }, () => this.of(schema.items as JsonSchema, singular(name), request, record, seen));
      }
      case 'integer':
        return clamp(schema, name === 'size' ? 48213 : name === 'value' || name === 'total' ? 1500 : 1);
      case 'number':
        return clamp(schema, name === 'value' || name === 'total' || name === 'price' ? 1500 : 1);
      case 'boolean':
        return true;
      case 'string':
        return this.string(schema, name, record);
      default:
        return schema.properties ? this.object(schema, request, record, seen) : {};
    }
  }

  private object(schema: JsonSchema, request: boolean, record: string, seen: readonly string[]): Record<string, unknown> {
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((schema.required ?? []) as string[]);
    let keys = Object.keys(properties);
    // A request shows what it needs (or, when nothing is required, a first key or two); an answer shows everything.
    if (request) keys = required.size ? keys.filter((k) => required.has(k)) : keys.slice(0, 2);
    return Object.fromEntries(keys.map((k) => [k, this.of(properties[k], k, request, record, seen)]));
  }

  private string(schema: JsonSchema, name: string, record: string): string {
    let value: string;
    if (schema.format === 'uuid' || name === 'id' || name.endsWith('_id')) value = this.uuid();
    else if (schema.format === 'date-time' || name.endsWith('_at')) value = DATE_TIME;
    else if (schema.format === 'binary') value = '(the file’s bytes)';
    else if (schema.format === 'email') value = NAMED.email as string;
    else if (name === 'name' && NAME_OF[record]) value = NAME_OF[record];
    else if (typeof NAMED[name] === 'string') value = NAMED[name] as string;
    else value = name ? name.replace(/_/g, ' ') : 'texto';
    if (schema.format === 'uuid' && !/^[0-9a-f-]{36}$/.test(value)) value = this.uuid();
    const min = Number(schema.minLength ?? 0);
    const max = Number(schema.maxLength ?? Infinity);
    if (value.length < min) value = value.padEnd(min, 'x');
    return value.slice(0, max);
  }

  private uuid(): string {
    this.ids += 1;
    return `7c9e6679-7425-40de-944b-${this.ids.toString(16).padStart(12, '0')}`;
  }
}

function clamp(schema: JsonSchema, value: number): number {
  const min = typeof schema.minimum === 'number' ? schema.minimum : -Infinity;
  const max = typeof schema.maximum === 'number' ? schema.maximum : Infinity;
  return Math.min(max, Math.max(min, value));
}

const singular = (name: string) => name.replace(/_ids$/, '_id').replace(/ies$/, 'y').replace(/s$/, '');
