// Factories for the templates tests: every row through the REST API with the organisation's key.
import { expect } from 'vitest';
import type { Org, TestClient } from '../helpers/app.js';
import { nextPhone } from '../helpers/factories.js';

export interface SyncTemplate {
  id: string;
  name: string;
  language: string;
  status: string;
  category: string;
  components: Record<string, unknown>[];
}

/** A provider template; `text` is its BODY. */
export function providerTemplate(name: string, fields: Partial<SyncTemplate> & { text?: string } = {}): SyncTemplate {
  const { text, ...rest } = fields;
  return {
    id: `prov-${name}-${rest.language ?? 'pt_BR'}`,
    name,
    language: 'pt_BR',
    status: 'APPROVED',
    category: 'MARKETING',
    components: [{ type: 'BODY', text: text ?? 'Olá {{1}}, sua proposta da {{2}} está pronta.' }],
    ...rest,
  };
}

export function syncRequest(api: TestClient, key: string, templates: SyncTemplate[], appId = 'app-1') {
  return api.rest('POST', '/backend/templates/sync', { key, body: { app_id: appId, templates } });
}

/** Syncs the templates (200 asserted) and returns them as listed, in the order given. */
export async function syncTemplates(api: TestClient, org: Org, templates: SyncTemplate[], appId = 'app-1') {
  const r = await syncRequest(api, org.key, templates, appId);
  expect(r.status, `sync: ${JSON.stringify(r.body)}`).toBe(200);
  expect(r.body).toEqual({ synced_count: templates.length, app_id: appId });
  const listed = await listTemplates(api, org, `?provider_app_id=${encodeURIComponent(appId)}`);
  return templates.map((t) => listed.find((l) => l.template_name === t.name.trim() && l.language === t.language));
}

export async function listTemplates(api: TestClient, org: Org, query = '') {
  const r = await api.rest('GET', `/backend/templates${query}`, { key: org.key });
  expect(r.status, `templates: ${JSON.stringify(r.body)}`).toBe(200);
  return r.body as any[];
}

export async function makeCadence(api: TestClient, org: Org, name = 'Boas-vindas') {
  const r = await api.rest('POST', '/backend/cadences', { key: org.key, body: { name } });
  expect(r.status, `cadence: ${JSON.stringify(r.body)}`).toBe(201);
  return r.body as { id: string; name: string; created_at: string };
}

export function createAssociation(api: TestClient, key: string, body: Record<string, unknown>) {
  return api.rest('POST', '/backend/templates/cadence-associations', { key, body });
}

export async function makeAssociation(api: TestClient, org: Org, body: Record<string, unknown>) {
  const r = await createAssociation(api, org.key, { step_index: 0, message_index: 0, ...body });
  expect(r.status, `association: ${JSON.stringify(r.body)}`).toBe(201);
  return r.body;
}

/** A lead through the API with any of its fields (envelope answer's data). */
export async function makeLead(api: TestClient, org: Org, fields: Record<string, unknown>) {
  const r = await api.rest('POST', '/backend/leads', { key: org.key, body: { phone: nextPhone(), ...fields } });
  expect(r.status, `lead: ${JSON.stringify(r.body)}`).toBe(200);
  return r.body.data as { id: string; phone: string };
}
