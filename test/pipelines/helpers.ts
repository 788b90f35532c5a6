// Shared helpers of the pipeline tests: the usual starting point (created through the API, see
// ../helpers/factories.ts) and a raw snapshot of an organisation's pipeline data, to prove a refused
// request changed nothing.
import { expect } from 'vitest';
import type { TestClient } from '../helpers/app.js';
import { makeOrgWithPipeline } from '../helpers/factories.js';

/** A new organisation with a pipeline, its four default stages as answered by the API, and a lead. */
export async function pipelineSetup(api: TestClient) {
  const { org, p, lead } = await makeOrgWithPipeline(api);
  const [entrada, andamento, ganho, perdido] = p.stages;
  return { org, p, entrada, andamento, ganho, perdido, lead };
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
