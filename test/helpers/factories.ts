// Test factories shared by the deal and pipeline tests: every row is created through the REST API with
// the organisation's key, as a client would, and each factory fails loudly when the API refuses.
// Raw inserts for states the API will not create live in ./fixtures.ts.
import { beforeAll, expect } from 'vitest';
import type { Org, TestClient } from './app.js';

export interface StageBody {
  id: string;
  pipeline_id: string;
  name: string;
  kind: 'won' | 'lost' | null;
  position: number;
  color: string;
}

/** A pipeline as `POST /backend/pipelines` answers it, plus the ids of its four default stages by name. */
export interface PipelineFixture {
  id: string;
  group_id: string;
  name: string;
  description: string;
  position: number;
  loss_reasons: string[];
  stages: StageBody[];
  entrada: string;
  andamento: string;
  ganho: string;
  perdido: string;
}

/**
 * A pipeline with the four default stages (Entrada, Em andamento, Ganho, Perdido). `fields` is its name,
 * or the request body (default `{name: 'Vendas', new_group_name: 'Comercial'}`; pass
 * `new_group_name: undefined` with a `group_id`).
 */
export async function makePipeline(api: TestClient, org: Org, fields: string | Record<string, unknown> = {}): Promise<PipelineFixture> {
  const body = { name: 'Vendas', new_group_name: 'Comercial', ...(typeof fields === 'string' ? { name: fields } : fields) };
  const r = await api.rest('POST', '/backend/pipelines', { key: org.key, body });
  expect(r.status, `pipeline: ${JSON.stringify(r.body)}`).toBe(201);
  const stageId = (name: string) => {
    const stage = (r.body.stages as StageBody[]).find((s) => s.name === name);
    if (!stage) throw new Error(`pipeline: no default stage ${name} in ${JSON.stringify(r.body.stages)}`);
    return stage.id;
  };
  return {
    ...r.body,
    entrada: stageId('Entrada'),
    andamento: stageId('Em andamento'),
    ganho: stageId('Ganho'),
    perdido: stageId('Perdido'),
  };
}

export async function makeProduct(api: TestClient, org: Org, name: string, price: number) {
  const r = await api.rest('POST', '/backend/pipeline/products', { key: org.key, body: { name, price } });
  expect(r.status, `product: ${JSON.stringify(r.body)}`).toBe(201);
  return r.body as { id: string; name: string; price: number };
}

let phone = 5511900000000;

/** A phone number no other lead of this test file has. */
export function nextPhone(): string {
  return `+${phone++}`;
}

export async function makeLead(api: TestClient, org: Org, fields: { name?: string; company?: string; email?: string } = {}) {
  const r = await api.rest('POST', '/backend/leads', { key: org.key, body: { name: fields.name ?? 'Ana', phone: nextPhone(), ...fields } });
  expect(r.status, `lead: ${JSON.stringify(r.body)}`).toBe(200);
  return r.body.data as { id: string; name: string };
}

export async function makeTag(api: TestClient, org: Org, name: string, color = '#22c55e') {
  const r = await api.rest('POST', '/backend/tags', { key: org.key, body: { name, color } });
  expect(r.status, `tag: ${JSON.stringify(r.body)}`).toBe(201);
  return r.body.data as { id: string; name: string; color: string };
}

export async function makeStatus(api: TestClient, org: Org, name = 'Qualificado') {
  const r = await api.rest('POST', '/backend/lead-statuses', { key: org.key, body: { name, color: '#3b82f6' } });
  expect(r.status, `status: ${JSON.stringify(r.body)}`).toBe(201);
  return r.body.data as { id: string };
}

/** `POST /backend/pipeline/deals` as is: the answer, whatever its status (for tests of refusals). */
export async function createDeal(api: TestClient, org: Org, body: Record<string, unknown>, key = org.key) {
  return api.rest('POST', '/backend/pipeline/deals', { key, body });
}

/** A deal through the API (201 asserted); returns the deal as answered. */
export async function makeDeal(api: TestClient, org: Org, body: Record<string, unknown>) {
  const r = await createDeal(api, org, body);
  expect(r.status, `deal: ${JSON.stringify(r.body)}`).toBe(201);
  return r.body;
}

export interface OrgWithPipeline {
  org: Org;
  p: PipelineFixture;
  lead: { id: string; name: string };
}

/** A new organisation with a pipeline "Vendas" and one lead: the setup most deal and pipeline tests start from. */
export async function makeOrgWithPipeline(api: TestClient, lead: { name?: string; company?: string } = {}): Promise<OrgWithPipeline> {
  const org = await api.newOrg();
  const p = await makePipeline(api, org);
  return { org, p, lead: await makeLead(api, org, lead) };
}

/**
 * makeOrgWithPipeline once for the whole file, in a beforeAll. Like useTestApp, the returned objects
 * are filled in before the tests run, so a file can destructure them at the top:
 * `const { org, p, lead } = useOrgWithPipeline(api)`.
 */
export function useOrgWithPipeline(api: TestClient, lead: { name?: string; company?: string } = {}): OrgWithPipeline {
  const made = {} as OrgWithPipeline;
  beforeAll(async () => {
    Object.assign(made, await makeOrgWithPipeline(api, lead));
  });
  const late = <K extends keyof OrgWithPipeline>(name: K) =>
    new Proxy({} as OrgWithPipeline[K], {
      get: (_, prop) => Reflect.get(made[name], prop),
      has: (_, prop) => Reflect.has(made[name], prop),
      ownKeys: () => Reflect.ownKeys(made[name]),
      getOwnPropertyDescriptor: (_, prop) => {
        const descriptor = Reflect.getOwnPropertyDescriptor(made[name], prop);
        return descriptor && { ...descriptor, configurable: true };
      },
    });
  return { org: late('org'), p: late('p'), lead: late('lead') };
}

/**
 * Requests on the deals of one setup: `base()` the minimal create body (first stage, the setup's lead),
 * `newDeal` creates (201 asserted), `get` reads, `put` edits and `move` changes the stage.
 */
export function dealRequests(api: TestClient, { org, p, lead }: { org: Org; p: PipelineFixture; lead: { id: string } }) {
  const base = () => ({ pipeline_id: p.id, stage_id: p.entrada, lead_id: lead.id });
  return {
    base,
    newDeal: (extra: Record<string, unknown> = {}) => makeDeal(api, org, { ...base(), ...extra }),
    get: async (id: string) => (await api.rest('GET', `/backend/pipeline/deals/${id}`, { key: org.key })).body,
    put: (id: string, body: unknown, key = org.key) => api.rest('PUT', `/backend/pipeline/deals/${id}`, { key, body }),
    move: (id: string, body: unknown, key = org.key) => api.rest('PUT', `/backend/pipeline/deals/${id}/stage`, { key, body }),
  };
}
