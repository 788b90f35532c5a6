// Live subscriptions, whatever carries them (Yoga's SSE, graphql-sse's single connection, graphql-ws
// over WebSocket: all run through the same envelop `subscribe`, so visibility, permissions and cost are
// those of HTTP):
// - bounded per API key in this process (LIVE_SUBSCRIPTIONS_PER_KEY): subscriptions, and WebSocket
//   connections likewise;
// - ended when their key no longer holds as it was (revoked, expired, deleted, its user's role or its
//   permissions changed): every KEY_CHECK_MS one statement reads every key with something open;
// - never left silent: a stream whose source fails (live data's Redis gone, a client too slow) sends one
//   last result with the error, then completes; the client subscribes again.
import { GraphQLError, type ExecutionResult } from 'graphql';
import { Repeater, type Plugin } from 'graphql-yoga';
import { effectivePermissions, type RoleName } from '../auth/permissions.js';
import type { TenantViewer } from '../auth/viewer.js';
import type { Context } from '../context/context.js';
import { AppError } from '../errors.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { errorText, log } from '../log.js';

/** How often the keys of open subscriptions and sockets are read again. */
export const KEY_CHECK_MS = 5_000;

const tooMany = (max: number) =>
  new AppError(
    'RATE_LIMITED',
    `Esta chave de API já tem ${max} assinaturas ao vivo abertas neste servidor: encerre uma antes de abrir outra.`,
    {
      max_subscriptions: max,
    },
  );
export const keyNoLongerHolds = () =>
  new AppError('UNAUTHORIZED', 'A chave de API foi revogada, expirou ou mudou de permissões: conecte-se de novo com uma chave válida.');

interface Holder {
  /** The role and permissions it was authorised with. */
  grants: string;
  end(error: AppError): void;
}

interface KeyRow {
  id: string;
  role: RoleName;
  permissions: string[];
  expires_at: Date | null;
  revoked_at: Date | null;
}

const KEYS_SQL = `
  SELECT k.id, u.role::text AS role, k.permissions, k.expires_at, k.revoked_at
  FROM api_keys k JOIN users u ON u.tenant_id = k.tenant_id AND u.id = k.user_id
  WHERE k.id = ANY($1::uuid[])`;

const grantsOf = (role: string, permissions: Iterable<string>) => `${role}:${[...permissions].sort().join(',')}`;

export class LiveSubscriptions {
  private readonly held = { stream: new Map<string, Set<Holder>>(), socket: new Map<string, Set<Holder>>() };
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly prisma: PrismaClient,
    readonly maxPerKey: number,
  ) {}

  /**
   * A place for one of the key's subscriptions (`stream`) or WebSocket connections (`socket`); `end`
   * is called if the key stops holding. Answers the release, or null when the key holds its bound.
   */
  hold(kind: 'stream' | 'socket', viewer: TenantViewer, end: (error: AppError) => void): (() => void) | null {
    const byKey = this.held[kind];
    const key = viewer.apiKeyId;
    let holders = byKey.get(key);
    if (this.maxPerKey > 0 && (holders?.size ?? 0) >= this.maxPerKey) return null;
    if (!holders) byKey.set(key, (holders = new Set()));
    const holder: Holder = { grants: grantsOf(viewer.role, viewer.permissions), end };
    holders.add(holder);
    this.timer ??= setInterval(() => void this.check(), KEY_CHECK_MS).unref();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      holders.delete(holder);
      if (!holders.size) byKey.delete(key);
    };
  }

  /** The refusal when `hold` answered null. */
  refusal = () => tooMany(this.maxPerKey);

  /** Ends what each key that no longer holds as it was has open (one statement for every key). */
  async check(): Promise<void> {
    const keys = [...new Set([...this.held.stream.keys(), ...this.held.socket.keys()])];
    if (!keys.length) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    let rows: KeyRow[];
    try {
      rows = await this.prisma.$queryRawUnsafe<KeyRow[]>(KEYS_SQL, keys);
    } catch {
      return; // the database is away: the next check decides
    }
    const now = new Date();
    const grants = new Map(
      rows
        .filter((r) => !r.revoked_at && (!r.expires_at || r.expires_at > now))
        .map((r) => [r.id, grantsOf(r.role, effectivePermissions(r.role, r.permissions))]),
    );
    for (const key of keys) {
      for (const holder of [...(this.held.stream.get(key) ?? []), ...(this.held.socket.get(key) ?? [])])
        if (holder.grants !== grants.get(key)) holder.end(keyNoLongerHolds());
    }
  }

  /** Open subscriptions and sockets of this process (the bench's and the tests' count). */
  counts() {
    const total = (m: Map<string, Set<Holder>>) => [...m.values()].reduce((n, s) => n + s.size, 0);
    return { streams: total(this.held.stream), sockets: total(this.held.socket) };
  }

  close() {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** An error as a stream's last result: an AppError as itself (graphql-js locates it), anything else masked (and logged). */
function lastResult(error: unknown): ExecutionResult {
  const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
  if (original instanceof AppError) return { errors: [original.toGraphQLError()] };
  if (error instanceof GraphQLError && error.extensions?.code) return { errors: [error] };
  log.error('live subscription failed', { error: errorText(error) });
  return { errors: [new GraphQLError('Erro interno do servidor', { extensions: { code: 'INTERNAL', status: 500 } })] };
}

/** Every subscription through Yoga's envelop: bounded per key, ended with its key, closed with its error. */
export function liveSubscriptionsPlugin(live: LiveSubscriptions): Plugin {
  return {
    onSubscribe({ args, setResultAndStopExecution }) {
      const viewer = (args.contextValue as unknown as Context).viewer;
      // Without an organisation's key the subscription fields refuse by themselves.
      if (viewer?.kind !== 'user') return;
      let end: (error: AppError) => void = () => {};
      let endedBy: AppError | undefined;
      const release = live.hold('stream', viewer, (error) => {
        endedBy = error;
        end(error);
      });
      if (!release) {
        setResultAndStopExecution({ errors: [live.refusal().toGraphQLError()] });
        return;
      }
      return {
        onSubscribeResult({ result, setResult }) {
          if (!(Symbol.asyncIterator in result)) return release();
          const source = result as AsyncIterable<ExecutionResult>;
          setResult(
            new Repeater<ExecutionResult>(async (push, stop) => {
              const iterator = source[Symbol.asyncIterator]();
              void stop.then(() => iterator.return?.());
              const finish = async (error: unknown) => {
                await push(lastResult(error));
                stop();
              };
              end = (error) => void finish(error);
              if (endedBy) return void finish(endedBy);
              try {
                let next;
                while (!(next = await iterator.next()).done) await push(next.value);
                stop();
              } catch (error) {
                await finish(error);
              } finally {
                release();
              }
            }),
          );
        },
        onSubscribeError: () => release(),
      };
    },
  };
}
