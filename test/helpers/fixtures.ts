// Raw inserts on the unscoped client (tenant_id passed explicitly), for the few states the API will not
// create; everything else comes from the API through ./factories.ts. Used for:
// - deals inserted concurrently with a stage deletion, to show that the database itself (the composite
//   foreign key) refuses a deal on a deleted stage, which the API's own checks would hide;
// - deals without history (the API writes a 'created' event for every deal), and their lines, where a
//   test counts events exactly.
import type { PrismaClient } from '../../src/generated/prisma/client.js';

/** The next deal number of the organisation (max + 1); pass `number` explicitly when inserting concurrently. */
export async function nextDealNumber(db: PrismaClient, tenantId: string): Promise<number> {
  const { _max } = await db.deal.aggregate({ where: { tenant_id: tenantId }, _max: { number: true } });
  return (_max.number ?? 0) + 1;
}

export async function insertDeal(
  db: PrismaClient,
  input: { tenantId: string; pipelineId: string; stageId: string; leadId: string; number?: number; value?: number; total?: number },
) {
  const number = input.number ?? (await nextDealNumber(db, input.tenantId));
  return db.deal.create({
    data: {
      tenant_id: input.tenantId,
      pipeline_id: input.pipelineId,
      stage_id: input.stageId,
      lead_id: input.leadId,
      number,
      value: input.value ?? 0,
      total: input.total ?? input.value ?? 0,
    },
  });
}

/** A product line; name and price as the deals service copies them from the catalog. */
export async function insertDealLine(
  db: PrismaClient,
  input: { tenantId: string; dealId: string; productId?: string | null; name: string; price: number; qty?: number; custom?: boolean },
) {
  return db.dealProduct.create({
    data: {
      tenant_id: input.tenantId,
      deal_id: input.dealId,
      product_id: input.productId ?? null,
      name: input.name,
      price: input.price,
      qty: input.qty ?? 1,
      custom: input.custom ?? false,
    },
  });
}
