// The settings of the bench's Funil servers: the one bench/run.ts starts in-process and the fairness
// line's process (bench/fairness-server.ts). Private URLs allowed: the webhooks line delivers to a
// receiver on loopback. No rate limit unless RATE_LIMIT_PER_MINUTE is given: the load of one key is the
// point (the fairness line measures the limiter). Imported after bench/run.ts has set LOG_LEVEL.
import { loadConfig } from '../src/config.js';

export function benchServerConfig(databaseUrl: string, storageDir: string) {
  return loadConfig({
    RATE_LIMIT_PER_MINUTE: '0',
    SECRETS_KEY: 'funil-bench-secrets-key-0123456789abcdef',
    ...process.env,
    DATABASE_URL: databaseUrl,
    STORAGE_DIR: storageDir,
    HOST: '127.0.0.1',
    PORT: '0',
    REQUIRE_HTTPS: 'false',
    NODE_ENV: 'production',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  });
}
