// Rate limits, counted by rate-limiter-flexible: requests a minute per API key (RATE_LIMIT_PER_MINUTE)
// and per organisation, all its keys together (RATE_LIMIT_PER_ORGANISATION_PER_MINUTE: minting keys
// does not multiply a budget), and failed authentications a minute per client address (30). With
// REDIS_URL the counters live in Redis, so every server process shares one budget (an unreachable Redis
// falls back to this process's memory rather than refusing service); without it, in memory.
// What a client sees: `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (seconds) on every
// /backend and /graphql answer; over a limit, 429 with `Retry-After`.
import type { IncomingMessage } from 'node:http';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import { log } from '../log.js';
import { countRateLimitRefusal } from '../observability/metrics.js';

export const FAILED_AUTHENTICATIONS_PER_MINUTE = 30;

/** One budget's state after a request: what the RateLimit-* headers say. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Seconds until the budget is whole again. */
  resetSeconds: number;
}

const stateOf = (limit: number, res: RateLimiterRes): RateLimitState => ({
  limit,
  remaining: Math.max(0, res.remainingPoints),
  resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
});

const overLimit = (state: RateLimitState, message: string) => new AppError('RATE_LIMITED', message, { retry_after: state.resetSeconds });

export class RateLimits {
  private readonly keys?: RateLimiterAbstract;
  private readonly organisations?: RateLimiterAbstract;
  private readonly addresses: RateLimiterAbstract;
  readonly perKey: number;
  readonly perOrganisation: number;
  private readonly redis?: Redis;

  constructor(config: Pick<Config, 'rateLimitPerMinute' | 'rateLimitPerOrganisationPerMinute' | 'redisUrl'>) {
    this.perKey = config.rateLimitPerMinute;
    this.perOrganisation = config.rateLimitPerOrganisationPerMinute;
    if (config.redisUrl) {
      // Commands fail at once while Redis is away (no offline queue): the memory limiter answers then.
      this.redis = new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
      this.redis.on('error', (error) => log.warn('redis error', { role: 'rate limits', error: error.message }));
    }
    const limiter = (keyPrefix: string, points: number) => {
      const options = { keyPrefix, points, duration: 60 };
      const memory = new RateLimiterMemory(options);
      return this.redis ? new RateLimiterRedis({ ...options, storeClient: this.redis, insuranceLimiter: memory }) : memory;
    };
    if (this.perKey > 0) this.keys = limiter('funil:rl:key', this.perKey);
    if (this.perOrganisation > 0) this.organisations = limiter('funil:rl:org', this.perOrganisation);
    this.addresses = limiter('funil:rl:auth', FAILED_AUTHENTICATIONS_PER_MINUTE);
  }

  /**
   * Counts a request of an API key against the key's budget and its organisation's; over either →
   * RATE_LIMITED. The state told is the budget with less left.
   */
  async admitKey(keyId: string, tenantId?: string): Promise<RateLimitState | undefined> {
    const key =
      this.keys &&
      (await this.consume(this.keys, this.perKey, keyId, 'api_key', 'Limite de requisições por minuto desta chave de API excedido'));
    const organisation =
      this.organisations &&
      tenantId &&
      (await this.consume(
        this.organisations,
        this.perOrganisation,
        tenantId,
        'organisation',
        'Limite de requisições por minuto da organização excedido',
      ));
    if (!key || !organisation) return key || organisation || undefined;
    return organisation.remaining < key.remaining ? organisation : key;
  }

  private async consume(
    limiter: RateLimiterAbstract,
    points: number,
    id: string,
    limit: 'api_key' | 'organisation',
    message: string,
  ): Promise<RateLimitState> {
    try {
      return stateOf(points, await limiter.consume(id));
    } catch (e) {
      if (!(e instanceof RateLimiterRes)) throw e;
      const state = stateOf(points, e);
      countRateLimitRefusal(limit);
      throw Object.assign(overLimit(state, message), { rateLimit: state });
    }
  }

  /** Counts a failed authentication of an address; over the budget → RATE_LIMITED instead of the 401. */
  async failedAuthentication(address: string, unauthorized: AppError): Promise<never> {
    let state: RateLimitState;
    try {
      state = stateOf(FAILED_AUTHENTICATIONS_PER_MINUTE, await this.addresses.consume(address));
    } catch (e) {
      if (!(e instanceof RateLimiterRes)) throw e;
      state = stateOf(FAILED_AUTHENTICATIONS_PER_MINUTE, e);
      countRateLimitRefusal('failed_auth');
      throw Object.assign(overLimit(state, 'Muitas autenticações com falha deste endereço; aguarde'), { rateLimit: state });
    }
    throw Object.assign(unauthorized, { rateLimit: state });
  }

  /** The failed-authentication budget of an address, without counting (answers of routes that take no key). */
  async addressState(address: string | undefined): Promise<RateLimitState> {
    const res = address ? await this.addresses.get(address).catch(() => null) : null;
    if (!res) return { limit: FAILED_AUTHENTICATIONS_PER_MINUTE, remaining: FAILED_AUTHENTICATIONS_PER_MINUTE, resetSeconds: 60 };
    return stateOf(
      FAILED_AUTHENTICATIONS_PER_MINUTE,
      new RateLimiterRes(FAILED_AUTHENTICATIONS_PER_MINUTE - res.consumedPoints, res.msBeforeNext),
    );
  }

  close(): void {
    this.redis?.disconnect();
  }
}

/** The budget an error was counted against, if any (set by RateLimits on the errors it throws). */
export function rateLimitOf(error: unknown): RateLimitState | undefined {
  return (error as { rateLimit?: RateLimitState } | null)?.rateLimit;
}

export function setRateLimitHeaders(headers: Headers, state: RateLimitState): void {
  headers.set('ratelimit-limit', String(state.limit));
  headers.set('ratelimit-remaining', String(state.remaining));
  headers.set('ratelimit-reset', String(state.resetSeconds));
}

/** What a request's limits need to know and tell: the client's address, and the budget it was counted against. */
export interface RequestLimits {
  /** The client's IP address: the connection's, or the last X-Forwarded-For entry behind TRUST_PROXY. */
  address?: string;
  state?: RateLimitState;
}

/**
 * Authenticates within the limits: a failed authentication counts against the client's address (over
 * 30 a minute → RATE_LIMITED instead of the refusal), a successful one against its key. `refusal` is
 * what a failure answers (the authentication's own 401 unless given, e.g. the platform area's 404).
 */
export async function authenticateWithin<V extends { kind: string; apiKeyId?: string; tenantId?: string }>(
  limits: RateLimits,
  request: RequestLimits,
  authenticate: () => Promise<V>,
  accept: (viewer: V) => boolean = () => true,
  refusal?: () => AppError,
): Promise<V> {
  let viewer: V | undefined;
  let failure: unknown;
  try {
    viewer = await authenticate();
  } catch (e) {
    if (!(e instanceof AppError && e.kind === 'UNAUTHORIZED')) throw e;
    failure = e;
  }
  try {
    if (!viewer || !accept(viewer)) {
      const refused = refusal?.() ?? (failure as AppError);
      if (!request.address) throw refused;
      return await limits.failedAuthentication(request.address, refused);
    }
    // The platform operator's token is no API key: only its failures count (per address).
    if (viewer.apiKeyId) request.state = await limits.admitKey(viewer.apiKeyId, viewer.tenantId);
    return viewer;
  } catch (e) {
    request.state = rateLimitOf(e) ?? request.state;
    throw e;
  }
}

/** The client's address as RequestLimits wants it. */
export function clientAddress(request: Request, connection: string | undefined, trustProxy: boolean): string | undefined {
  return addressOf(request.headers.get('x-forwarded-for'), connection, trustProxy);
}

/** The same, for a request Node hands over as it is (a WebSocket's upgrade). */
export function socketAddress(request: IncomingMessage, trustProxy: boolean): string | undefined {
  const forwarded = request.headers['x-forwarded-for'];
  return addressOf(Array.isArray(forwarded) ? forwarded.join(',') : (forwarded ?? null), request.socket.remoteAddress, trustProxy);
}

function addressOf(forwardedFor: string | null, connection: string | undefined, trustProxy: boolean): string | undefined {
  const forwarded = trustProxy ? forwardedFor?.split(',').pop()?.trim() : undefined;
  return forwarded || connection;
}
