// Outbound message statuses move forward only: pending → sent → delivered → read, or failed from
// pending or sent. Whoever moves a message out of `pending` (the delivery job or a provider's status
// callback, whichever comes first) emits `message.sent`, so it is emitted once; a move to failed emits
// `message.failed`. Each move is one conditional UPDATE: concurrent reports cannot move a message
// backwards.
import { Prisma } from '../../generated/prisma/client.js';
import type { Config } from '../../config.js';
import type { Context } from '../../context/context.js';
import type { TenantDb, TenantTx } from '../../db/tenant-scope.js';
import { notFound, invalidField } from '../../errors.js';
import { emit } from '../../events/emit.js';
import type { Message, MessageStatus } from '../../generated/prisma/client.js';
import { isUuid, optionalText } from '../common/validate.js';
import { messageData } from './shapes.js';
import { tenantIs } from '../../tenant-sql.js';

export type ReportedStatus = 'sent' | 'delivered' | 'read' | 'failed';
export const REPORTED_STATUSES: readonly ReportedStatus[] = ['sent', 'delivered', 'read', 'failed'];

/** The statuses a message may be in to move to each reported status. */
const FROM: Record<ReportedStatus, MessageStatus[]> = {
  sent: ['pending'],
  delivered: ['pending', 'sent'],
  read: ['pending', 'sent', 'delivered'],
  failed: ['pending', 'sent'],
};

export interface StatusChange {
  status: ReportedStatus;
  error?: string | null;
  providerMessageId?: string | null;
}

/**
 * The usual provider callback in one statement: the channel's outbound message with this provider id,
 * already out of `pending`, moved forward (sent → delivered → read, or to failed). False when it moved
 * nothing: the message is unknown, still pending (advanceStatus, which emits `message.sent`), or past
 * this status already.
 */
export async function advanceSentByProviderId(
  db: Pick<TenantDb, '$tenantQueryDirect'>,
  channelId: string,
  providerMessageId: string,
  change: Pick<StatusChange, 'status' | 'error'>,
): Promise<boolean> {
  // A failure is an event (message.failed): advanceStatus writes it.
  const from = change.status === 'failed' ? [] : FROM[change.status].filter((s) => s !== 'pending');
  if (!from.length) return false;
  const error = change.status === 'failed' ? Prisma.sql`${change.error ?? null}::text` : Prisma.sql`m.error`;
  const [moved] = await db.$tenantQueryDirect<{ n: number }>(
    (tenant) => Prisma.sql`
    WITH moved AS (
      UPDATE messages m SET status = ${change.status}::"MessageStatus", error = ${error}, updated_at = now()
      WHERE ${tenantIs(tenant, 'm')} AND m.channel_id = ${channelId}::uuid AND m.role = 'assistant'
        AND m.provider_message_id = ${providerMessageId}::text AND m.status = ANY(${from}::"MessageStatus"[])
      RETURNING 1)
    SELECT count(*)::int AS n FROM moved`,
  );
  return moved.n > 0;
}

/**
 * Applies a status to one outbound message if it moves it forward; returns the message as it is now.
 * `config` builds the event's media_url.
 */
export async function advanceStatus(
  tx: TenantTx,
  config: Pick<Config, 'publicBaseUrl'>,
  messageId: string,
  change: StatusChange,
): Promise<Message> {
  const data = {
    status: change.status,
    ...(change.status === 'failed' ? { error: change.error ?? null } : {}),
    ...(change.providerMessageId ? { provider_message_id: change.providerMessageId } : {}),
  };
  const leftPending = await tx.message.updateMany({ where: { id: messageId, role: 'assistant', status: 'pending' }, data });
  if (leftPending.count) {
    const message = await tx.message.findUniqueOrThrow({ where: { id: messageId } });
    await emit(tx, change.status === 'failed' ? 'message.failed' : 'message.sent', messageData(message, config));
    return message;
  }
  const later = FROM[change.status].filter((s) => s !== 'pending');
  const moved = later.length
    ? (await tx.message.updateMany({ where: { id: messageId, role: 'assistant', status: { in: later } }, data })).count
    : 0;
  if (change.providerMessageId) {
    await tx.message.updateMany({
      where: { id: messageId, provider_message_id: null },
      data: { provider_message_id: change.providerMessageId },
    });
  }
  const message = await tx.message.findUniqueOrThrow({ where: { id: messageId } });
  if (moved && change.status === 'failed') await emit(tx, 'message.failed', messageData(message, config));
  return message;
}

/**
 * POST /backend/channels/{id}/status (any key of the organisation; an operator's reaches only the
 * messages of conversations it sees): a provider reports a status for one of the channel's outbound
 * messages, named by our id or the provider's. A report that would move it backwards changes nothing;
 * the message is answered as it is.
 */
export async function reportStatus(ctx: Context, channelId: string, input: { message_id: string; status: string; error?: string | null }) {
  if (!REPORTED_STATUSES.includes(input.status as ReportedStatus))
    throw invalidField('status', `deve ser um de: ${REPORTED_STATUSES.join(', ')}`);
  const ref = input.message_id.trim();
  if (!ref || ref.length > 255) throw invalidField('message_id', 'é obrigatório');
  const error = optionalText('error', input.error, 1000);
  if (!(await ctx.db.channel.findUnique({ where: { id: channelId }, select: { id: true } }))) throw notFound('Canal');
  // Under the scoped client: an operator's key finds only messages of the conversations it sees.
  const message = await ctx.db.message.findFirst({
    where: { channel_id: channelId, role: 'assistant', OR: [{ provider_message_id: ref }, ...(isUuid(ref) ? [{ id: ref }] : [])] },
    select: { id: true },
  });
  if (!message) throw notFound('Mensagem');
  return ctx.db.$transaction((tx) => advanceStatus(tx, ctx.config, message.id, { status: input.status as ReportedStatus, error }));
}
