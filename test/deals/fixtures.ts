// Deal test fixtures, inserted directly (unscoped client, tenant_id explicit): a group, a pipeline with
// the four default stages, catalog products, leads and tags of one organisation.
import type { Org, TestClient } from '../helpers/app.js';

export interface PipelineFixture {
  id: string;
  groupId: string;
  entrada: string;
  andamento: string;
  ganho: string;
  perdido: string;
  stages: string[];
}

let seq = 0;

export async function makePipeline(api: TestClient, org: Org, name = 'Vendas'): Promise<PipelineFixture> {
  const db = api.db.prisma;
  const group = await db.pipelineGroup.create({ data: { tenant_id: org.tenantId, name: 'Comercial', position: seq++ } });
  const pipeline = await db.pipeline.create({
    data: {
      tenant_id: org.tenantId,
      group_id: group.id,
      name,
      position: seq++,
      loss_reasons: ['Preço', 'Concorrência', 'Sem resposta', 'Sem orçamento', 'Timing'],
    },
  });
  const defs = [
    { name: 'Entrada', kind: null },
    { name: 'Em andamento', kind: null },
    { name: 'Ganho', kind: 'won' as const },
    { name: 'Perdido', kind: 'lost' as const },
  ];
  const stages: string[] = [];
  for (const [position, def] of defs.entries()) {
    const stage = await db.stage.create({ data: { tenant_id: org.tenantId, pipeline_id: pipeline.id, name: def.name, kind: def.kind, position } });
    stages.push(stage.id);
  }
  return { id: pipeline.id, groupId: group.id, entrada: stages[0], andamento: stages[1], ganho: stages[2], perdido: stages[3], stages };
}

export async function makeProduct(api: TestClient, org: Org, name: string, price: number) {
  return api.db.prisma.product.create({ data: { tenant_id: org.tenantId, name, price } });
}

let phone = 5511900000000;

export function nextPhone(): string {
  return `+${phone++}`;
}

export async function makeLead(api: TestClient, org: Org, fields: { name?: string; company?: string; email?: string } = {}) {
  const r = await api.rest('POST', '/backend/leads', { key: org.key, body: { name: fields.name ?? 'Ana', phone: nextPhone(), ...fields } });
  if (r.status !== 200) throw new Error(`lead: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data as { id: string; name: string };
}

export async function makeTag(api: TestClient, org: Org, name: string) {
  const r = await api.rest('POST', '/backend/tags', { key: org.key, body: { name, color: '#22c55e' } });
  if (r.status !== 201) throw new Error(`tag: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data as { id: string; name: string; color: string };
}

export async function makeStatus(api: TestClient, org: Org, name = 'Qualificado') {
  const r = await api.rest('POST', '/backend/lead-statuses', { key: org.key, body: { name, color: '#3b82f6' } });
  if (r.status !== 201) throw new Error(`status: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data as { id: string };
}

export async function createDeal(api: TestClient, org: Org, body: Record<string, unknown>, key = org.key) {
  return api.rest('POST', '/backend/pipeline/deals', { key, body });
}
