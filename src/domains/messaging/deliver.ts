// The `messages.deliver` queue: hands a pending message (a text, or a media file by its media proxy
// address) to its channel's provider. A channel that is down never blocks the request that stored the
// message; the job retries transient failures (network, timeouts, 408/429/5xx) on its schedule and
// records the provider's error as `failed` when a refusal is final or the attempts run out. Reruns are
// harmless: only a `pending` message is sent.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../../config.js';
import type { Message } from '../../generated/prisma/client.js';
import { defineQueue, fairQueue, type QueueDeps } from '../../jobs/queue.js';
import { sendThroughChannel, type Outgoing } from './providers.js';
import { messageMediaUrl } from './shapes.js';
import { advanceStatus } from './status.js';
import { tenantClientsOf, type TenantDb } from '../../db/tenant-scope.js';
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

/** Tries at recording that a provider took a message, 0.2 s, then 0.4 s… apart (see recordSent). */
const RECORD_SENT_ATTEMPTS = 4;
const RECORD_SENT_RETRY_MS = 200;

/** Waits after failed attempts 1, 2, …: five attempts within about ten minutes. */
export const DELIVERY_RETRY_DELAYS = [2_000, 15_000, 60_000, 300_000];

/**
 * A text, a template by its name and language with the body's values, or a media message's file by its
 * public address, with its caption (and a document's name). Null when the template went away.
 */
async function outgoingOf(scoped: TenantDb, message: Message, config: Pick<Config, 'publicBaseUrl'>): Promise<Outgoing | null> {
  if (message.type === 'template' && message.template_id) {
    const template = await scoped.template.findUnique({
      where: { id: message.template_id },
      select: { template_name: true, language: true },
    });
    return (
      template && { type: 'template', name: template.template_name, language: template.language, parameters: message.template_parameters }
    );
  }
  const link = messageMediaUrl(config, message);
  if (!link) return { type: 'text', text: message.content };
  const type = message.type as 'image' | 'audio' | 'video' | 'document';
  return { type, link, caption: message.content || undefined, filename: message.media_filename ?? undefined };
}

/**
 * The provider took the message: from here a failure must not fail the job, whose retry would send it
 * again. A database hiccup is retried here; an id another message of the channel already holds is left
 * out (status reports then name ours). Only a database down for longer resends it (at least once).
 */
async function recordSent(scoped: TenantDb, config: Pick<Config, 'publicBaseUrl'>, messageId: string, providerMessageId: string | null) {
  for (let attempt = 1; ; attempt++) {
    try {
      return void (await scoped.$transaction((tx) => advanceStatus(tx, config, messageId, { status: 'sent', providerMessageId })));
    } catch (error) {
      if (providerMessageId && constraintViolation(error) === 'unique') {
        log.warn('messages.deliver: the provider answered an id another message of the channel holds; not recorded', { messageId });
        providerMessageId = null;
      } else if (attempt >= RECORD_SENT_ATTEMPTS) throw error;
      else await sleep(RECORD_SENT_RETRY_MS * attempt);
    }
  }
}

export const messageDeliveryQueue = ({ db, config }: QueueDeps) =>
  defineQueue<DeliverPayload>({
    name: DELIVER_QUEUE,
    retryDelays: DELIVERY_RETRY_DELAYS,
    maxAttempts: DELIVERY_RETRY_DELAYS.length + 1,
    fairness: { perKey: deliveriesPerOrganisation(config) },
    handler: async ({ tenant_id, message_id }, job) => {
      const scoped = tenantClientsOf(db.prisma, db.direct, db.oneSnapshot).for(tenant_id);
      const message = await scoped.message.findUnique({
        where: { id: message_id },
        include: { channel: true, lead: { select: { phone: true, whatsapp_user_id: true } } },
      });
      if (!message || message.status !== 'pending') return;
      const fail = (error: string) => scoped.$transaction((tx) => advanceStatus(tx, config, message.id, { status: 'failed', error }));
      if (!message.channel) return void (await fail('O canal da mensagem foi removido'));
      if (!message.channel.active) return void (await fail('O canal da mensagem está inativo'));

      const outgoing = await outgoingOf(scoped, message, config);
      if (!outgoing) return void (await fail('O template da mensagem foi removido'));
      const outcome = await sendThroughChannel(message.channel, message.lead, outgoing, {
        allowPrivate: config.webhookAllowPrivateUrls,
      });
      if (outcome.kind === 'sent') return recordSent(scoped, config, message.id, outcome.providerMessageId);
      if (outcome.kind === 'failed' || job.attempt >= job.maxAttempts) return void (await fail(outcome.error));
      throw new Error(outcome.error);
    },
  });
