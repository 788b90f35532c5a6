// Lead events (decisions.md "Events and deliveries"), emitted in the transaction of the change. Their
// `data` is the lead as GET /backend/leads/{id} returns it (the Lead type of types.ts), read once after
// the write; test/webhooks/events.test.ts compares the two.
import type { TenantTx } from '../../db/tenant-scope.js';
import { emitMany, type EventInput } from '../../events/emit.js';
import type { Lead, LeadStatus, Tag } from '../../generated/prisma/client.js';

const iso = (d: Date) => d.toISOString();

/** The lead as its REST read returns it, read in the transaction. */
export async function leadPayload(db: TenantTx, id: string) {
  const lead = await db.lead.findUniqueOrThrow({
    where: { id },
    include: { status: true, lead_tags: { select: { tag: true }, orderBy: [{ tag: { name: 'asc' } }, { tag_id: 'asc' }] } },
  });
  return leadData(
    lead,
    lead.status,
    lead.lead_tags.map(({ tag }) => tag),
  );
}

type Stamped = { created_at: Date; updated_at: Date };

/** A lead's event data from its row, its status and its tags (by name), for a write that has them already. */
export function leadData(
  lead: Omit<Lead, 'tenant_id' | 'status_id'>,
  status: (Pick<LeadStatus, 'id' | 'name' | 'color'> & Stamped) | null,
  tags: (Pick<Tag, 'id' | 'name' | 'color'> & Stamped)[],
) {
  return {
    id: lead.id,
    name: lead.name,
    surname: lead.surname,
    phone: lead.phone,
    whatsapp_user_id: lead.whatsapp_user_id,
    whatsapp_username: lead.whatsapp_username,
    email: lead.email,
    company: lead.company,
    avatar_url: lead.avatar_url,
    status: status && {
      id: status.id,
      name: status.name,
      color: status.color,
      created_at: iso(status.created_at),
      updated_at: iso(status.updated_at),
    },
    tags: tags.map((tag) => ({
      id: tag.id,
      name: tag.name,
      color: tag.color,
      created_at: iso(tag.created_at),
      updated_at: iso(tag.updated_at),
    })),
    custom_fields: (lead.custom_fields ?? {}) as Record<string, unknown>,
    created_at: iso(lead.created_at),
    updated_at: iso(lead.updated_at),
  };
}

/** `lead.created`. */
export async function recordLeadCreated(db: TenantTx, id: string) {
  await emitMany(db, [{ type: 'lead.created', data: await leadPayload(db, id) }]);
}

/** `lead.updated`, then `lead.status_changed` (with from/to) when the status is not `previousStatusId` any more. */
export async function recordLeadUpdated(db: TenantTx, id: string, previousStatusId: string | null) {
  const lead = await leadPayload(db, id);
  const statusId = lead.status?.id ?? null;
  const events: EventInput[] = [{ type: 'lead.updated', data: lead }];
  if (statusId !== previousStatusId)
    events.push({ type: 'lead.status_changed', data: { ...lead, from_status_id: previousStatusId, to_status_id: statusId } });
  await emitMany(db, events);
}
