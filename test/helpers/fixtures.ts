// Raw fixture inserts on the unscoped client (tenant_id passed explicitly), for tests that need leads,
// deals and deal lines without going through their APIs.
import type { PrismaClient } from '../../src/generated/prisma/client.js';

let phoneSeq = 0;

export async function insertLead(db: PrismaClient, tenantId: string, overrides: { name?: string; phone?: string; company?: string } = {}) {
  phoneSeq++;
  const phone = overrides.phone ?? `+55119${String(Date.now() % 1e4).padStart(4, '0')}${String(phoneSeq).padStart(4, '0')}`;
  return db.lead.create({ data: { tenant_id: tenantId, name: overrides.name ?? `Lead ${phoneSeq}`, phone, company: overrides.company ?? null } });
}

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
