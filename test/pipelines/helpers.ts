// Shared helpers of the pipeline tests: quick creation through the API and a raw snapshot of an
// organisation's pipeline data, to prove a refused request changed nothing.
import { expect } from 'vitest';
import type { TestClient } from '../helpers/app.js';

export async function newPipeline(api: TestClient, key: string, body: Record<string, unknown> = {}) {
  const r = await api.rest('POST', '/backend/pipelines', { key, body: { name: 'Vendas', new_group_name: 'Comercial', ...body } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { id: string; group_id: string; stages: { id: string; name: string; kind: string | null; position: number; color: string }[]; loss_reasons: string[] };
}

/** Everything pipeline-related of one organisation, in a stable order. */
export async function snapshot(api: TestClient, tenantId: string) {
  const p = api.db.prisma;
  const where = { tenant_id: tenantId };
  return {
    groups: await p.pipelineGroup.findMany({ where, orderBy: { id: 'asc' } }),
    pipelines: await p.pipeline.findMany({ where, orderBy: { id: 'asc' } }),
    stages: await p.stage.findMany({ where, orderBy: { id: 'asc' } }),
    deals: await p.deal.findMany({ where, orderBy: { id: 'asc' } }),
    lines: await p.dealProduct.findMany({ where, orderBy: { id: 'asc' } }),
    products: await p.product.findMany({ where, orderBy: { id: 'asc' } }),
  };
}

/** Stage positions of a pipeline as stored, in position order: must be 0..n-1. */
export async function storedStages(api: TestClient, pipelineId: string) {
  return api.db.prisma.stage.findMany({ where: { pipeline_id: pipelineId }, orderBy: [{ position: 'asc' }, { id: 'asc' }] });
}

export function expectDense(positions: number[]) {
  expect([...positions].sort((a, b) => a - b)).toEqual(positions.map((_, i) => i));
}
