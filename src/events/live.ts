// The live hub of GraphQL subscriptions: one pub/sub per server (keyed by its configuration); with
// REDIS_URL its events go through Redis (Yoga's Redis event target), so a change committed by one
// process reaches the subscribers of every process. Topics are scoped by organisation (the topic id
// starts with the tenant id), so a subscriber never hears another organisation. Changes are published
// after their transaction commits (db/after-commit.ts) with everything a subscriber answers with.
// A graceful stop ends the hub's streams (endLiveStreams): each SSE response completes, so the
// server's drain does not wait for subscribers that would never hang up.
import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { createPubSub, Repeater, type PubSub } from 'graphql-yoga';
import { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { log } from '../log.js';

/** Topic → [topic id, payload]. Payloads cross Redis as JSON: dates arrive as ISO strings, decimals as strings. */
export type LiveTopics = {
  /** The message and its conversation's department (domains/messaging/live.ts); `{ message_id }` from a previous version. */
  messageAdded: [tenantId: string, event: { message: unknown; department_id: string | null } | { message_id: string }];
  /** Topic id `${tenantId}:${pipelineId}`: the deal changes of one committed transaction in that pipeline. */
  dealChanged: [topic: string, batch: { events: unknown[] }];
  conversationUpdated: [tenantId: string, event: unknown];
  /** Department membership changed in the organisation: subscribers' visible departments are stale. */
  departmentsChanged: [tenantId: string, event: Record<string, never>];
};

const hubs = new WeakMap<Config, PubSub<LiveTopics>>();

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

export function liveHub(config: Config): PubSub<LiveTopics> {
  let pubSub = hubs.get(config);
  if (!pubSub) {
    const eventTarget = config.redisUrl
      ? createRedisEventTarget<CustomEvent>({
          publishClient: redisClient(config.redisUrl, 'publish'),
          subscribeClient: redisClient(config.redisUrl, 'subscribe'),
        })
      : undefined;
    pubSub = createPubSub<LiveTopics>(eventTarget ? { eventTarget } : {});
    hubs.set(config, pubSub);
  }
  return pubSub;
}

/** The source's values until the server stops; then the stream finishes (and the source is closed). */
export function untilStopped<T>(config: Config) {
  const { ended } = stopSignal(config);
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

/** For a graceful stop: ends every live stream of this server, and any started from now on. */
export function endLiveStreams(config: Config) {
  stopSignal(config).end();
}
