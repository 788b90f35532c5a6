// What counts as a secret in an answer: a generated API key (prefix and checksum) or a webhook signing
// secret. Such values are shown once, in the answer that made them, and never kept in clear elsewhere.
import { isGeneratedKey } from './auth/keys.js';

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
