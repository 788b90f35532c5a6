// The `messages.deliver` queue: hands a pending message (a text, or a media file by its media proxy
// address) to its channel's provider. A channel that is down never blocks the request that stored the
// message; the job retries transient failures (network, timeouts, 408/429/5xx) on its schedule and
// records the provider's error as `failed` when a refusal is final or the attempts run out. Reruns are
// harmless: only a `pending` message is sent.
import type { Config } from '../../config.js';
import type { Message } from '../../generated/prisma/client.js';
import { defineQueue, fairQueue, type QueueDeps } from '../../jobs/queue.js';
import { sendThroughChannel, type Outgoing } from './providers.js';
import { messageMediaUrl } from './shapes.js';
import { advanceStatus } from './status.js';
import { tenantClientsOf } from '../../db/tenant-scope.js';
import { constraintViolation } from '../../errors.js';
import { log } from '../../log.js';

/** Deliveries, grouped by organisation for fair claims. */
export const DELIVER_QUEUE = fairQueue('messages.deliver', 'tenant_id');

export type DeliverPayload = { tenant_id: string; message_id: string };

/**
 * An organisation's messages in flight at once, across every process: half of a process's job slots
 * (WORKER_CONCURRENCY), so one organisation's campaign to a slow provider leaves the other half to
 * everyone else's messages, which are claimed in turns beside it.
 */
export const deliveriesPerOrganisation = (config: Pick<Config, 'workerConcurrency'>) =>
  Math.max(1, Math.ceil(config.workerConcurrency / 2));

/** Waits after failed attempts 1, 2, …: five attempts within about ten minutes. */
export const DELIVERY_RETRY_DELAYS = [2_000, 15_000, 60_000, 300_000];

/** A text, or a media message's file by its public address, with its caption (and a document's name). */
function outgoingOf(message: Message, config: Pick<Config, 'publicBaseUrl'>): Outgoing {
  const link = messageMediaUrl(config, message);
  if (!link) return { type: 'text', text: message.content };
  const type = message.type as Exclude<Outgoing['type'], 'text'>;
  return { type, link, caption: message.content || undefined, filename: message.media_filename ?? undefined };
}

export const messageDeliveryQueue = ({ db, config }: QueueDeps) =>
  defineQueue<DeliverPayload>({
    name: DELIVER_QUEUE,
    retryDelays: DELIVERY_RETRY_DELAYS,
    maxAttempts: DELIVERY_RETRY_DELAYS.length + 1,
    fairness: { perKey: deliveriesPerOrganisation(config) },
    handler: async ({ tenant_id, message_id }, job) => {
      const scoped = tenantClientsOf(db.prisma, db.direct).for(tenant_id);
      const message = await scoped.message.findUnique({
        where: { id: message_id },
        include: { channel: true, lead: { select: { phone: true } } },
      });
      if (!message || message.status !== 'pending') return;
      const fail = (error: string) => scoped.$transaction((tx) => advanceStatus(tx, config, message.id, { status: 'failed', error }));
      if (!message.channel) return void (await fail('O canal da mensagem foi removido'));
      if (!message.channel.active) return void (await fail('O canal da mensagem está inativo'));

      const outcome = await sendThroughChannel(message.channel, message.lead.phone, outgoingOf(message, config), {
        allowPrivate: config.webhookAllowPrivateUrls,
      });
      if (outcome.kind === 'sent') {
        const record = (providerMessageId: string | null) =>
          scoped.$transaction((tx) => advanceStatus(tx, config, message.id, { status: 'sent', providerMessageId }));
        try {
          await record(outcome.providerMessageId);
        } catch (error) {
          // The provider took the message: failing here would retry the job and send it again. An id
          // another message of the channel already holds is left out (reports then name ours).
          if (constraintViolation(error) !== 'unique') throw error;
          log.warn('messages.deliver: the provider answered an id another message of the channel holds; not recorded', {
            messageId: message.id,
            channelId: message.channel.id,
          });
          await record(null);
        }
        return;
      }
      if (outcome.kind === 'failed' || job.attempt >= job.maxAttempts) return void (await fail(outcome.error));
      throw new Error(outcome.error);
    },
  });
