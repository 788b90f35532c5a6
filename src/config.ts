// Environment → typed configuration, validated once at start. Every setting is documented in the README.
import os from 'node:os';
import path from 'node:path';
import { isGeneratedKey } from './auth/keys.js';

/** The smallest SECRETS_KEY entry: 32 characters (`npm run cli -- keygen --secrets` prints 43). */
const MIN_SECRETS_KEY_LENGTH = 32;

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl?: string;
  /** Embedded mode: PGlite in a worker thread of its own (PGLITE_WORKER), or on the main thread. */
  pgliteWorker: boolean;
  storageDir: string;
  /** Where stored files live: STORAGE_DIR on disk (default), or an S3-compatible bucket (STORAGE=s3, S3_*). */
  storage: StorageConfig;
  /** Where files sent as `File` arguments wait on disk while their request runs (UPLOAD_TEMP_DIR). */
  uploadTempDir: string;
  publicBaseUrl: string;
  adminToken?: string;
  bootstrapApiKey?: string;
  webhookAllowPrivateUrls: boolean;
  webhookRetrySchedule?: number[];
  tlsCertFile?: string;
  tlsKeyFile?: string;
  requireHttps: boolean;
  trustProxy: boolean;
  /** How long a client has to send a request body, from its headers. */
  requestBodyTimeoutMs: number;
  production: boolean;
  /**
   * Keys that seal webhook secrets and channel tokens at rest, the first sealing (SECRETS_KEY, comma
   * separated); unset, a key generated into DATA_DIR/secrets.key (src/secrets.ts).
   */
  secretsKeys?: string[];
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** Origins allowed to call /graphql and /backend from a browser; empty = none. */
  corsOrigins: string[];
  /** Run background jobs in this process (WORKERS). */
  workers: boolean;
  /** Jobs run at once by this process (WORKER_CONCURRENCY). */
  workerConcurrency: number;
  /** PostgreSQL connections in this process's pool (DATABASE_POOL_SIZE). */
  databasePoolSize: number;
  /** PostgreSQL cancels a statement running longer than this; 0 = never (DATABASE_STATEMENT_TIMEOUT_MS). */
  databaseStatementTimeoutMs: number;
  /** After SIGTERM, how long connections are still accepted while /ready answers 503 (SHUTDOWN_DELAY_MS). */
  shutdownDelayMs: number;
  /** From SIGTERM to exit: past it, what is still running is cut and the exit code is 1 (SHUTDOWN_TIMEOUT_MS). */
  shutdownTimeoutMs: number;
  /** redis:// URL: live GraphQL subscriptions cross server processes through Redis (REDIS_URL). */
  redisUrl?: string;
  /** `npm start` (and the CLI) apply pending migrations; false: they refuse an unmigrated database (MIGRATE_ON_START). */
  migrateOnStart: boolean;
  /** GET /metrics answers only with `Authorization: Bearer <METRICS_TOKEN>`; unset, it is 404 (METRICS_TOKEN). */
  metricsToken?: string;
  /** OTLP/HTTP endpoint traces are exported to; unset, tracing is off (OTEL_EXPORTER_OTLP_ENDPOINT, read by src/observability/preload.ts). */
  otlpEndpoint?: string;
  /** Requests a minute per API key; 0 turns the limits off (RATE_LIMIT_PER_MINUTE). */
  rateLimitPerMinute: number;
  /**
   * Requests a minute per organisation, all its keys together, so minting keys does not multiply a
   * budget; default three keys' worth, 0 off (RATE_LIMIT_PER_ORGANISATION_PER_MINUTE).
   */
  rateLimitPerOrganisationPerMinute: number;
  /**
   * Live subscriptions (SSE streams and WebSocket subscriptions) one API key may hold open in this
   * process, and WebSocket connections likewise; 0 no bound (LIVE_SUBSCRIPTIONS_PER_KEY).
   */
  liveSubscriptionsPerKey: number;
  /** Knowledge extractions running at once in this process, all organisations together (EXTRACT_CONCURRENCY). */
  extractConcurrency: number;
  /** How long a knowledge file waits for an extraction slot before the request gets 503 (EXTRACT_WAIT_MS). */
  extractWaitMs: number;
  /**
   * While other organisations are active, an organisation's knowledge files start at most this many bytes a
   * second (EXTRACT_PACE_BYTES_PER_SECOND; 0: no pace). See domains/knowledge/extract/pace.ts.
   */
  extractPaceBytesPerSecond: number;
}

export type StorageConfig = { kind: 'disk' } | ({ kind: 's3' } & S3Settings);

export interface S3Settings {
  bucket: string;
  /** Unset: AWS S3 itself; else the URL of an S3-compatible service (MinIO, R2, s3rver…). */
  endpoint?: string;
  region: string;
  /** Unset: the AWS SDK's default credential chain (instance role, AWS_* variables, profiles). */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** `http://endpoint/bucket/key` instead of `http://bucket.endpoint/key` (most self-hosted services need it). */
  forcePathStyle: boolean;
}

/** The largest file a request may carry (the spec's 10 MB): a fixed limit, not an environment setting. */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;
/** 10 MB of file plus room for the rest of a multipart form. */
export const MAX_BODY_BYTES = MAX_FILE_BYTES + 256 * 1024;

export class ConfigError extends Error {}

function storageConfig(env: NodeJS.ProcessEnv, problems: string[]): StorageConfig {
  const kind = env.STORAGE || 'disk';
  if (kind === 'disk') return { kind };
  if (kind !== 's3') {
    problems.push(`STORAGE must be disk or s3, got "${kind}"`);
    return { kind: 'disk' };
  }
  const bucket = env.S3_BUCKET || '';
  if (!bucket) problems.push('STORAGE=s3 needs S3_BUCKET');
  const endpoint = env.S3_ENDPOINT || undefined;
  if (endpoint && !/^https?:\/\/[^/]/.test(endpoint)) problems.push('S3_ENDPOINT must be an http:// or https:// URL');
  const accessKeyId = env.S3_ACCESS_KEY_ID || undefined;
  const secretAccessKey = env.S3_SECRET_ACCESS_KEY || undefined;
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey)) problems.push('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together');
  const forcePathStyle = bool('S3_FORCE_PATH_STYLE', env.S3_FORCE_PATH_STYLE, false);
  return { kind, bucket, endpoint, region: env.S3_REGION || 'us-east-1', accessKeyId, secretAccessKey, forcePathStyle };
}

function bool(name: string, raw: string | undefined, fallback: boolean): boolean {
  if (raw === undefined || raw === '') return fallback;
  if (['true', '1', 'yes'].includes(raw.toLowerCase())) return true;
  if (['false', '0', 'no'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const port = Number(env.PORT ?? 4000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) problems.push(`PORT must be a port number, got "${env.PORT}"`);
  const host = env.HOST || '127.0.0.1';
  const dataDir = path.resolve(env.DATA_DIR || './data');
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) problems.push('DATABASE_URL must start with postgres:// or postgresql://');
  const production = env.NODE_ENV === 'production';
  // The test environment's in-process apps share one key unless a test gives its own.
  const secretsKeys = env.SECRETS_KEY
    ? env.SECRETS_KEY.split(',').map((k) => k.trim())
    : env.NODE_ENV === 'test'
      ? ['funil-test-secrets-key-for-NODE_ENV-test-only']
      : undefined;
  if (secretsKeys?.some((k) => k.length < MIN_SECRETS_KEY_LENGTH))
    problems.push(
      `SECRETS_KEY entries must be at least ${MIN_SECRETS_KEY_LENGTH} characters (make one with \`npm run cli -- keygen --secrets\`)`,
    );
  // Processes sharing a PostgreSQL database must share the key: a data directory's own file would not be.
  if (production && databaseUrl && !secretsKeys)
    problems.push('SECRETS_KEY is required in production with DATABASE_URL (make one with `npm run cli -- keygen --secrets`)');
  const tlsCertFile = env.TLS_CERT_FILE || undefined;
  const tlsKeyFile = env.TLS_KEY_FILE || undefined;
  if (Boolean(tlsCertFile) !== Boolean(tlsKeyFile)) problems.push('TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  let webhookRetrySchedule: number[] | undefined;
  if (env.WEBHOOK_RETRY_SCHEDULE) {
    webhookRetrySchedule = env.WEBHOOK_RETRY_SCHEDULE.split(',').map((s) => Number(s.trim()));
    if (webhookRetrySchedule.some((n) => !Number.isFinite(n) || n < 0))
      problems.push('WEBHOOK_RETRY_SCHEDULE must be comma-separated milliseconds');
  }
  const requestBodyTimeoutMs = Number(env.REQUEST_BODY_TIMEOUT_MS || 30_000);
  if (!Number.isInteger(requestBodyTimeoutMs) || requestBodyTimeoutMs < 1)
    problems.push(`REQUEST_BODY_TIMEOUT_MS must be a positive number of milliseconds, got "${env.REQUEST_BODY_TIMEOUT_MS}"`);
  const logLevel = (env.LOG_LEVEL || (env.NODE_ENV === 'test' ? 'silent' : 'info')) as Config['logLevel'];
  if (!['debug', 'info', 'warn', 'error', 'silent'].includes(logLevel))
    problems.push(`LOG_LEVEL must be debug, info, warn, error or silent`);
  // A key that could never authenticate would be accepted here and then lock everyone out.
  if (env.BOOTSTRAP_API_KEY && !isGeneratedKey(env.BOOTSTRAP_API_KEY))
    problems.push(
      'BOOTSTRAP_API_KEY is not a well-formed API key (fnl_ followed by 38 letters and digits ending in a checksum): make one with `npm run cli -- keygen`',
    );
  const workerConcurrency = Number(env.WORKER_CONCURRENCY || 10);
  if (!Number.isInteger(workerConcurrency) || workerConcurrency < 1)
    problems.push(`WORKER_CONCURRENCY must be a whole number >= 1, got "${env.WORKER_CONCURRENCY}"`);
  const whole = (name: string, fallback: number, min: number) => {
    const value = Number(env[name] || fallback);
    if (!Number.isInteger(value) || value < min) problems.push(`${name} must be a whole number >= ${min}, got "${env[name]}"`);
    return value;
  };
  const databasePoolSize = whole('DATABASE_POOL_SIZE', 10, 1);
  const databaseStatementTimeoutMs = whole('DATABASE_STATEMENT_TIMEOUT_MS', 30_000, 0);
  const shutdownDelayMs = whole('SHUTDOWN_DELAY_MS', 0, 0);
  const shutdownTimeoutMs = whole('SHUTDOWN_TIMEOUT_MS', 25_000, 1);
  if (shutdownDelayMs >= shutdownTimeoutMs) problems.push('SHUTDOWN_DELAY_MS must be shorter than SHUTDOWN_TIMEOUT_MS');
  const rateLimitPerMinute = whole('RATE_LIMIT_PER_MINUTE', 1200, 0);
  const rateLimitPerOrganisationPerMinute = whole('RATE_LIMIT_PER_ORGANISATION_PER_MINUTE', 3 * rateLimitPerMinute, 0);
  const liveSubscriptionsPerKey = whole('LIVE_SUBSCRIPTIONS_PER_KEY', 100, 0);
  const extractConcurrency = whole('EXTRACT_CONCURRENCY', os.availableParallelism(), 1);
  const extractWaitMs = whole('EXTRACT_WAIT_MS', 30_000, 1);
  const extractPaceBytesPerSecond = whole('EXTRACT_PACE_BYTES_PER_SECOND', 2_000_000, 0);
  const redisUrl = env.REDIS_URL || undefined;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) problems.push('REDIS_URL must start with redis:// or rediss://');
  const otlpEndpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined;
  if (otlpEndpoint && !/^https?:\/\/[^/]/.test(otlpEndpoint))
    problems.push('OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL');
  let result: Config | undefined;
  try {
    const storage = storageConfig(env, problems);
    result = {
      port,
      host,
      dataDir,
      databaseUrl,
      pgliteWorker: bool('PGLITE_WORKER', env.PGLITE_WORKER, true),
      storageDir: path.resolve(env.STORAGE_DIR || path.join(dataDir, 'files')),
      storage,
      uploadTempDir: path.resolve(env.UPLOAD_TEMP_DIR || os.tmpdir()),
      publicBaseUrl: (env.PUBLIC_BASE_URL || `${tlsCertFile ? 'https' : 'http'}://${host}:${port}`).replace(/\/$/, ''),
      adminToken: env.ADMIN_TOKEN || undefined,
      bootstrapApiKey: env.BOOTSTRAP_API_KEY || undefined,
      webhookAllowPrivateUrls: bool('WEBHOOK_ALLOW_PRIVATE_URLS', env.WEBHOOK_ALLOW_PRIVATE_URLS, false),
      webhookRetrySchedule,
      tlsCertFile,
      tlsKeyFile,
      requireHttps: bool('REQUIRE_HTTPS', env.REQUIRE_HTTPS, production),
      trustProxy: bool('TRUST_PROXY', env.TRUST_PROXY, false),
      requestBodyTimeoutMs,
      production,
      secretsKeys,
      logLevel,
      corsOrigins: (env.CORS_ORIGINS ?? '')
        .split(',')
        .map((o) => o.trim().replace(/\/$/, ''))
        .filter(Boolean),
      workers: bool('WORKERS', env.WORKERS, true),
      workerConcurrency,
      databasePoolSize,
      databaseStatementTimeoutMs,
      shutdownDelayMs,
      shutdownTimeoutMs,
      redisUrl,
      migrateOnStart: bool('MIGRATE_ON_START', env.MIGRATE_ON_START, true),
      metricsToken: env.METRICS_TOKEN || undefined,
      otlpEndpoint,
      rateLimitPerMinute,
      rateLimitPerOrganisationPerMinute,
      liveSubscriptionsPerKey,
      extractConcurrency,
      extractWaitMs,
      extractPaceBytesPerSecond,
    };
  } catch (e) {
    problems.push((e as Error).message);
  }
  if (problems.length || !result) throw new ConfigError(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  return result;
}
