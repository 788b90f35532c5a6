// Live messages for the `messageAdded` subscription. A message is announced after the transaction that
// stored it commits (inbound, the WhatsApp webhook, send); each subscriber re-reads it through the
// visibility policy, so a caller only receives messages of conversations it can see at that moment.
// One hub per server (keyed by its configuration); with REDIS_URL the hub's events go through Redis
// (Yoga's Redis event target), so a message stored by one process reaches subscribers of every process.
// A graceful stop ends the hub's streams (endMessageStreams): each SSE response completes, so the
// server's drain does not wait for subscribers that would never hang up.
import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { createPubSub, filter, map, pipe, Repeater, type PubSub } from 'graphql-yoga';
import { Redis } from 'ioredis';
import { requireTenant } from '../../auth/viewer.js';
import type { Config } from '../../config.js';
import type { Context } from '../../context/context.js';
import type { Message } from '../../generated/prisma/client.js';
import { log } from '../../log.js';
import { audienceOf, messageWhere } from './visibility.js';

type Topics = { messageAdded: [tenantId: string, event: { message_id: string }] };

const hubs = new WeakMap<Config, PubSub<Topics>>();

/** Per server: resolves when it stops; every stream ends then, and one started later ends at once. */
interface StopSignal {
  ended: Promise<void>;
  end: () => void;
}

const stops = new WeakMap<Config, StopSignal>();

function stopSignal(config: Config): StopSignal {
  let signal = stops.get(config);
  if (!signal) {
    let end = () => {};
    const ended = new Promise<void>((resolve) => (end = resolve));
    stops.set(config, (signal = { ended, end }));
  }
  return signal;
}

/** A Redis client whose failed commands are logged, never left as unhandled rejections. */
function redisClient(url: string, role: string): Redis {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  client.on('error', (error) => log.warn('redis error', { role, error: error.message }));
  for (const command of ['publish', 'subscribe', 'unsubscribe'] as const) {
    const original = client[command].bind(client) as (...args: unknown[]) => Promise<unknown>;
    (client as unknown as Record<string, unknown>)[command] = (...args: unknown[]) =>
      original(...args).catch((error: Error) => log.warn('redis command failed', { role, command, error: error.message }));
  }
  return client;
}

function hub(config: Config): PubSub<Topics> {
  let pubSub = hubs.get(config);
  if (!pubSub) {
    const eventTarget = config.redisUrl
      ? createRedisEventTarget<CustomEvent>({ publishClient: redisClient(config.redisUrl, 'publish'), subscribeClient: redisClient(config.redisUrl, 'subscribe') })
      : undefined;
    pubSub = createPubSub<Topics>(eventTarget ? { eventTarget } : {});
    hubs.set(config, pubSub);
  }
  return pubSub;
}

/** The source's values until `ended` resolves; then the stream finishes (and the source is closed). */
function until<T>(ended: Promise<void>) {
  return (source: AsyncIterable<T>) =>
    new Repeater<T>(async (push, stop) => {
      const iterator = source[Symbol.asyncIterator]();
      void stop.then(() => iterator.return?.());
      void ended.then(() => stop());
      let next;
      while (!(next = await iterator.next()).done) await push(next.value);
      stop();
    });
}

/** For a graceful stop: ends every messageAdded stream of this server, and any started from now on. */
export function endMessageStreams(config: Config) {
  stopSignal(config).end();
}

/** Call once the message's transaction has committed. */
export function announceMessage(config: Config, tenantId: string, messageId: string) {
  hub(config).publish('messageAdded', tenantId, { message_id: messageId });
}

/** New messages of the caller's organisation that the caller can see, read when each one arrives. */
export function messagesFor(ctx: Context): AsyncIterable<Message> {
  const viewer = requireTenant(ctx.viewer);
  const audience = audienceOf(viewer);
  return pipe(
    hub(ctx.config).subscribe('messageAdded', viewer.tenantId),
    until(stopSignal(ctx.config).ended),
    map((event) => ctx.db.message.findFirst({ where: { AND: [{ id: event.message_id }, messageWhere(audience)] } })),
    filter((message): message is Message => message !== null),
  );
}
