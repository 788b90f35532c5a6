// Secrets: what counts as one in an answer, and how the ones Funil must read back (webhook signing
// secrets, messaging channels' tokens) are kept at rest: sealed with AES-256-GCM under a key from the
// environment (SECRETS_KEY: a comma-separated list, the first seals, every one opens, so keys rotate),
// or, without it, a key generated into the data directory on first use (DATA_DIR/secrets.key, mode
// 0600). API keys are never sealed: only their hash is stored. A sealed value reads
// `enc:v1:<key id>:<base64url of iv, tag and ciphertext>`; a value without that prefix is one written
// before sealing, read as it is until `cli reseal-secrets` (or the start) seals it.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { isGeneratedKey } from './auth/keys.js';
import type { Config } from './config.js';

/** Standard Webhooks' prefix of a signing secret (`whsec_` + base64 of the key bytes). */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/**
 * A JSON text with every secret string value replaced by null: what a stored copy of an answer (an
 * idempotency replay record) keeps.
 */
export function withoutSecrets(json: string): string {
  return json.replace(/"((?:fnl_|whsec_)[A-Za-z0-9+/=]+)"/g, (whole, value: string) =>
    isGeneratedKey(value) || value.startsWith(WEBHOOK_SECRET_PREFIX) ? 'null' : whole,
  );
}

const SEALED = 'enc:v1:';
const KEY_FILE = 'secrets.key';

interface SealingKey {
  id: string;
  bytes: Buffer;
}

const sealingKey = (text: string): SealingKey => {
  const bytes = createHash('sha256').update(text).digest();
  return { id: createHash('sha256').update(bytes).digest('hex').slice(0, 8), bytes };
};

/** A new random SECRETS_KEY value. */
export function generateSecretsKey(): string {
  return randomBytes(32).toString('base64url');
}

export class SecretBox {
  private readonly keys: SealingKey[];
  constructor(keyTexts: readonly string[]) {
    if (!keyTexts.length) throw new Error('A secret box needs at least one key');
    this.keys = keyTexts.map(sealingKey);
  }

  /** The id of the key that seals: what `isCurrent` compares. */
  get currentKeyId(): string {
    return this.keys[0].id;
  }

  seal(plain: string): string {
    const key = this.keys[0];
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key.bytes, iv);
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${SEALED}${key.id}:${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url')}`;
  }

  /** The plain value; one stored before sealing is returned as it is. Throws for a key it does not hold. */
  open(value: string): string {
    if (!value.startsWith(SEALED)) return value;
    const [id, data] = value.slice(SEALED.length).split(':');
    const key = this.keys.find((k) => k.id === id);
    if (!key || !data) throw new Error(`A secret is sealed with key ${id}, which SECRETS_KEY does not hold`);
    const bytes = Buffer.from(data, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', key.bytes, bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
  }

  /** How every value sealed with the current key begins (what a query for stale values compares). */
  get currentPrefix(): string {
    return `${SEALED}${this.currentKeyId}:`;
  }

  /** Whether a stored value is sealed with the current key (else `reseal` has work to do). */
  isCurrent(value: string): boolean {
    return value.startsWith(this.currentPrefix);
  }

  /** The value sealed with the current key (opened first if it was sealed with another). */
  reseal(value: string): string {
    return this.isCurrent(value) ? value : this.seal(this.open(value));
  }
}

/** Where the key comes from for this configuration: SECRETS_KEY, or the data directory's file. */
function keyTextsOf(config: Pick<Config, 'secretsKeys' | 'dataDir'>): string[] {
  if (config.secretsKeys?.length) return [...config.secretsKeys];
  const file = path.join(config.dataDir, KEY_FILE);
  fs.mkdirSync(config.dataDir, { recursive: true });
  try {
    fs.writeFileSync(file, `${generateSecretsKey()}\n`, { flag: 'wx', mode: 0o600 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  return [fs.readFileSync(file, 'utf8').trim()];
}

let box: SecretBox | undefined;
const configured = new Set<string>();

/**
 * Sets the process's box from a configuration (the app, the workers and the CLI call it at their
 * start). Several configurations in one process (tests) add their keys for opening; the last seals.
 */
export function configureSecrets(config: Pick<Config, 'secretsKeys' | 'dataDir'>): SecretBox {
  const texts = keyTextsOf(config);
  for (const t of texts) configured.add(t);
  box = new SecretBox([texts[0], ...[...configured].filter((t) => t !== texts[0])]);
  return box;
}

/** The process's box (configureSecrets ran at the start). */
export function secrets(): SecretBox {
  if (!box) throw new Error('configureSecrets(config) must run before secrets are read or written');
  return box;
}
