// The live hub of GraphQL subscriptions (SSE and WebSocket alike): one per server (keyed by its
// configuration). With REDIS_URL its events go through Redis, so a change committed by one process
// reaches the subscribers of every process; channels and messages are those of Yoga's Redis pub/sub
// (`topic:id`, JSON), so processes of the previous version interoperate. Topics are scoped by
// organisation (the topic id starts with the tenant id), so a subscriber never hears another
// organisation. Changes are published after their transaction commits (db/after-commit.ts) with
// everything a subscriber answers with.
//
// A subscription is never left silent: when its source fails (the Redis subscriber connection is lost,
// a SUBSCRIBE is refused, Redis is down when it starts) it ends with SERVICE_UNAVAILABLE, which the
// client sees, and the client subscribes again (and reads what it missed). A subscriber whose client
// reads more slowly than changes come ends the same way once LIVE_BACKLOG_MAX events wait for it, so
// it cannot grow the server's memory. The subscriber connection sends nothing before it is ready (no
// offline queue: a SUBSCRIBE queued before the ready check put the connection in subscriber mode under
// the check), and `/ready` waits for it (liveReady).
// A graceful stop ends the hub's streams (endLiveStreams): each stream completes, so the server's
// drain does not wait for subscribers that would never hang up.
import { Repeater } from 'graphql-yoga';
import { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
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

type Topic = keyof LiveTopics;

/** How long a subscription made at start waits for the first Redis connection. */
const FIRST_CONNECTION_WAIT_MS = 5_000;

/** Events that may wait for one subscriber's client before its subscription is ended. */
export const LIVE_BACKLOG_MAX = 200;

export const liveInterrupted = () =>
  new AppError('SERVICE_UNAVAILABLE', 'As atualizações ao vivo foram interrompidas: assine de novo e leia o que mudou.');
const tooSlow = () =>
  new AppError(
    'SERVICE_UNAVAILABLE',
    `Mais de ${LIVE_BACKLOG_MAX} eventos esperam por este cliente, que lê devagar demais: assine de novo.`,
  );

export interface LiveHub {
  publish<T extends Topic>(topic: T, id: LiveTopics[T][0], payload: LiveTopics[T][1]): void;
  /** The topic's events from now on; ends with an AppError when the source fails or the client lags. */
  subscribe<T extends Topic>(topic: T, id: LiveTopics[T][0]): Repeater<LiveTopics[T][1]>;
  /** True once events could be received once (the Redis subscriber connected; always without Redis). */
  ready(): boolean;
  close(): void;
}

interface Listener {
  event(payload: unknown): void;
  fail(error: AppError): void;
}

/** How events come and go: in this process, or through Redis. */
interface Transport {
  send(channel: string, payload: unknown): void;
  /** Starts receiving a channel's events (its first listener). */
  listen(channel: string): Promise<void>;
  unlisten(channel: string): void;
  connected(): boolean;
  /** Whether events can be received: at once, or once a first connection is made (a few seconds at most). */
  connection(): Promise<boolean>;
  /** Connected at least once. */
  started(): boolean;
  close(): void;
}

function createHub(config: Config): LiveHub {
  const listeners = new Map<string, Set<Listener>>();
  const deliver = (channel: string, payload: unknown) => {
    for (const listener of listeners.get(channel) ?? []) listener.event(payload);
  };
  const failAll = (error: AppError) => {
    const all = [...listeners.values()].flatMap((set) => [...set]);
    listeners.clear();
    for (const listener of all) listener.fail(error);
  };
  const failChannel = (channel: string, error: AppError) => {
    const set = listeners.get(channel);
    listeners.delete(channel);
    for (const listener of set ?? []) listener.fail(error);
  };
  const transport = config.redisUrl ? redisTransport(config.redisUrl, deliver, failAll) : localTransport(deliver);

  return {
    publish(topic, id, payload) {
      transport.send(`${topic}:${id}`, payload);
    },
    subscribe<T extends Topic>(topic: T, id: LiveTopics[T][0]) {
      const channel = `${topic}:${id}`;
      return new Repeater<LiveTopics[T][1]>(async (push, stop) => {
        if (!(await transport.connection())) {
          stop(liveInterrupted());
          return;
        }
        let waiting = 0;
        const listener: Listener = {
          event(payload) {
            if (waiting >= LIVE_BACKLOG_MAX) return void stop(tooSlow());
            waiting++;
            void push(payload as LiveTopics[T][1]).then(
              () => waiting--,
              () => {},
            );
          },
          fail: (error) => void stop(error),
        };
        let set = listeners.get(channel);
        const first = !set;
        if (!set) listeners.set(channel, (set = new Set()));
        set.add(listener);
        if (first) transport.listen(channel).catch(() => failChannel(channel, liveInterrupted()));
        await stop;
        const current = listeners.get(channel);
        if (current?.delete(listener) && current.size === 0) {
          listeners.delete(channel);
          transport.unlisten(channel);
        }
      });
    },
    ready: () => transport.started(),
    close: () => transport.close(),
  };
}

function localTransport(deliver: (channel: string, payload: unknown) => void): Transport {
  return {
    send: deliver,
    listen: async () => {},
    unlisten: () => {},
    connected: () => true,
    connection: async () => true,
    started: () => true,
    close: () => {},
  };
}

function redisTransport(url: string, deliver: (channel: string, payload: unknown) => void, failAll: (error: AppError) => void): Transport {
  const publisher = new Redis(url, { maxRetriesPerRequest: 1 });
  publisher.on('error', (error) => log.warn('redis error', { role: 'publish', error: error.message }));
  // No offline queue and no automatic re-subscription: a command is sent only once the connection is
  // ready, and a lost connection ends every subscription (their events in between would be lost).
  const subscriber = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, autoResubscribe: false });
  let connected = false;
  let started = false;
  subscriber.on('error', (error) => log.warn('redis error', { role: 'subscribe', error: error.message }));
  subscriber.on('ready', () => {
    connected = started = true;
  });
  // A subscription made while the process starts waits for the first connection, not one in an outage.
  const firstConnection = new Promise<boolean>((resolve) => {
    subscriber.once('ready', () => resolve(true));
    setTimeout(() => resolve(false), FIRST_CONNECTION_WAIT_MS).unref();
  });
  subscriber.on('close', () => {
    if (!connected) return;
    connected = false;
    log.warn('live: the Redis subscriber connection was lost; open subscriptions end with an error');
    failAll(liveInterrupted());
  });
  subscriber.on('message', (channel: string, message: string) => {
    let payload: unknown;
    try {
      payload = message === '' ? null : JSON.parse(message);
    } catch {
      return;
    }
    deliver(channel, payload);
  });
  return {
    send(channel, payload) {
      publisher
        .publish(channel, payload === undefined ? '' : JSON.stringify(payload))
        .catch((error: Error) => log.warn('redis command failed', { role: 'publish', command: 'publish', error: error.message }));
    },
    listen: async (channel) => {
      await subscriber.subscribe(channel);
    },
    unlisten(channel) {
      if (connected) subscriber.unsubscribe(channel).catch(() => {});
    },
    connected: () => connected,
    connection: async () => connected || (!started && (await firstConnection)),
    started: () => started,
    close() {
      connected = false;
      publisher.disconnect();
      subscriber.disconnect();
    },
  };
}

const hubs = new WeakMap<Config, LiveHub>();

export function liveHub(config: Config): LiveHub {
  let hub = hubs.get(config);
  if (!hub) hubs.set(config, (hub = createHub(config)));
  return hub;
}

/**
 * For `/ready`: the hub has connected once (the Redis subscriber, when there is one), so a process is
 * not ready before its subscriptions can hear anything. A later outage does not make it unready: REST
 * and queries still work, and subscriptions refuse with SERVICE_UNAVAILABLE until Redis is back.
 */
export const liveReady = (config: Config) => liveHub(config).ready();

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

/** Lets go of the hub's connections (after endLiveStreams, when the server stops). */
export function closeLiveHub(config: Config) {
  hubs.get(config)?.close();
  hubs.delete(config);
}
