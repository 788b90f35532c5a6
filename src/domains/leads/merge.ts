// POST /backend/leads/{id}/merge {source_id}: two leads of one person become one, in one transaction.
// Lead `id` stays; the source's conversations, messages, deals (with their lines, activities and history),
// cadence enrolments and tags (union) move to it, and the fields it lacks (phone, WhatsApp user id and username, e-mail,
// company, custom-field keys) are filled from the source, which is then deleted. A lead has at most one
// open conversation: when both have one on the same channel, the source's messages join the survivor's
// (unread counts add, the newer last message wins) and the source's conversation is removed; on
// different channels the source's is archived. Either needs the caller to see that conversation (404
// otherwise), as any write into a conversation does. Moved rows get a new updated_at, so sync lists
// give them again. Events: `lead.updated` and `lead.merged` (the lead, and `source_id`).
import { Prisma } from '../../generated/prisma/client.js';
import type { Context } from '../../context/context.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { invalidField, notFound } from '../../errors.js';
import { tenantIs } from '../../tenant-sql.js';
import { LOCKING_TX, lockRow } from '../common/lock.js';
import type { Selection } from '../common/types.js';
import { customFields } from '../common/custom-fields.js';
import { emitMany } from '../../events/emit.js';
import { leadPayload } from './events.js';
import { settleLeadTags } from './loaders.js';
import { MAX_TAGS } from './limits.js';

interface OpenConversation {
  id: string;
  lead_id: string;
  channel_id: string | null;
  visible: boolean;
}

export async function mergeLeads(ctx: Context, id: string, sourceId: string, query: Selection = {}) {
  if (sourceId === id) throw invalidField('source_id', 'deve ser outro lead (não o próprio)');
  return ctx.db.$transaction(async (tx) => {
    // Both rows, in one order whatever the direction: two merges of the same pair cannot deadlock.
    for (const leadId of [id, sourceId].sort()) await lockRow(tx, 'leads', leadId);
    const withTags = { include: { lead_tags: { select: { tag_id: true } } } } as const;
    const lead = await tx.lead.findUnique({ where: { id }, ...withTags });
    if (!lead) throw notFound('Lead');
    const source = await tx.lead.findUnique({ where: { id: sourceId }, ...withTags });
    if (!source) throw notFound('Lead');

    const tags = new Set([...lead.lead_tags, ...source.lead_tags].map((t) => t.tag_id));
    if (tags.size > MAX_TAGS) throw invalidField('source_id', `somaria ${tags.size} tags ao lead (máximo ${MAX_TAGS})`);
    // The survivor's values win; the union must still be a valid set of custom fields (≤ 100 keys).
    const fields = customFields({ ...(source.custom_fields as object), ...(lead.custom_fields as object) }) ?? {};

    await joinOpenConversations(tx, id, sourceId);
    await tx.$tenantQuery(
      (tenant) => Prisma.sql`UPDATE conversations SET lead_id = ${id}::uuid, updated_at = now()
      WHERE ${tenantIs(tenant)} AND lead_id = ${sourceId}::uuid`,
    );
    await tx.$tenantQuery(
      (tenant) => Prisma.sql`UPDATE messages SET lead_id = ${id}::uuid WHERE ${tenantIs(tenant)} AND lead_id = ${sourceId}::uuid`,
    );
    await tx.$tenantQuery(
      (tenant) =>
        Prisma.sql`UPDATE deals SET lead_id = ${id}::uuid, updated_at = now() WHERE ${tenantIs(tenant)} AND lead_id = ${sourceId}::uuid`,
    );
    // Cadence enrolments follow too, but for an active one in a cadence where the survivor is active
    // already (a lead is in a cadence once while active): that one goes with the source.
    await tx.$tenantQuery(
      (tenant) => Prisma.sql`UPDATE cadence_enrolments e SET lead_id = ${id}::uuid
      WHERE ${tenantIs(tenant, 'e')} AND e.lead_id = ${sourceId}::uuid AND NOT (e.status = 'active' AND EXISTS (
        SELECT 1 FROM cadence_enrolments t WHERE t.tenant_id = e.tenant_id AND t.cadence_id = e.cadence_id AND t.lead_id = ${id}::uuid AND t.status = 'active'))`,
    );
    await tx.$tenantQuery(
      (tenant) => Prisma.sql`INSERT INTO lead_tags (tenant_id, lead_id, tag_id)
      SELECT tenant_id, ${id}::uuid, tag_id FROM lead_tags WHERE ${tenantIs(tenant)} AND lead_id = ${sourceId}::uuid
      ON CONFLICT DO NOTHING`,
    );
    // Nothing points at the source any more: deleting it frees its phone and BSUID for the survivor.
    await tx.lead.delete({ where: { id: sourceId } });
    await tx.lead.update({
      where: { id },
      data: {
        phone: lead.phone ?? source.phone,
        whatsapp_user_id: lead.whatsapp_user_id ?? source.whatsapp_user_id,
        whatsapp_username: lead.whatsapp_username ?? source.whatsapp_username,
        email: lead.email ?? source.email,
        company: lead.company ?? source.company,
        custom_fields: fields,
        updated_at: new Date(),
      },
    });
    // The survivor keeps its status: no lead.status_changed. One read of the lead for both events.
    const merged = await leadPayload(tx, id);
    await emitMany(tx, [
      { type: 'lead.updated', data: merged },
      { type: 'lead.merged', data: { ...merged, source_id: sourceId } },
    ]);
    await settleLeadTags(ctx, tx, id);
    return tx.lead.findUniqueOrThrow({ ...query, where: { id } });
  }, LOCKING_TX);
}

/** The two leads' open conversations become at most one (the partial unique index allows one per lead). */
async function joinOpenConversations(tx: TenantTx, id: string, sourceId: string): Promise<void> {
  const open = await tx.$tenantQuery<OpenConversation[]>(
    (tenant, visible) => Prisma.sql`
    SELECT c.id::text AS id, c.lead_id::text AS lead_id, c.channel_id::text AS channel_id, ${visible.conversation(Prisma.sql`c`)} AS visible
    FROM conversations c WHERE ${tenantIs(tenant, 'c')} AND c.lead_id IN (${id}::uuid, ${sourceId}::uuid) AND c.status = 'active'
    FOR UPDATE OF c`,
  );
  const kept = open.find((c) => c.lead_id === id);
  const dropped = open.find((c) => c.lead_id === sourceId);
  if (!kept || !dropped) return;
  if (!dropped.visible || (dropped.channel_id === kept.channel_id && !kept.visible)) throw notFound('Conversa');
  if (dropped.channel_id !== kept.channel_id) {
    await tx.$tenantQuery(
      (tenant) =>
        Prisma.sql`UPDATE conversations SET status = 'archived', updated_at = now() WHERE ${tenantIs(tenant)} AND id = ${dropped.id}::uuid`,
    );
    return;
  }
  await tx.$tenantQuery(
    (tenant) => Prisma.sql`UPDATE messages SET conversation_id = ${kept.id}::uuid, lead_id = ${id}::uuid
    WHERE ${tenantIs(tenant)} AND conversation_id = ${dropped.id}::uuid`,
  );
  await tx.$tenantQuery(
    (tenant) => Prisma.sql`
    UPDATE conversations k SET
      unread_count = k.unread_count + d.unread_count,
      last_message_content = CASE WHEN k.last_message_at IS NULL OR d.last_message_at > k.last_message_at THEN d.last_message_content ELSE k.last_message_content END,
      last_message_role = CASE WHEN k.last_message_at IS NULL OR d.last_message_at > k.last_message_at THEN d.last_message_role ELSE k.last_message_role END,
      last_message_at = GREATEST(k.last_message_at, d.last_message_at),
      last_inbound_at = GREATEST(k.last_inbound_at, d.last_inbound_at),
      updated_at = now()
    FROM conversations d
    WHERE ${tenantIs(tenant, 'k')} AND k.id = ${kept.id}::uuid AND d.tenant_id = k.tenant_id AND d.id = ${dropped.id}::uuid`,
  );
  await tx.$tenantQuery((tenant) => Prisma.sql`DELETE FROM conversations WHERE ${tenantIs(tenant)} AND id = ${dropped.id}::uuid`);
}
