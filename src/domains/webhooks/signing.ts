// Standard Webhooks signatures (https://www.standardwebhooks.com): a secret is `whsec_` + base64 of random
// bytes; the HMAC key is those bytes, not the text. Receivers verify with any Standard Webhooks library.
import { createHmac, randomBytes } from 'node:crypto';
import { WEBHOOK_SECRET_PREFIX } from '../../secrets.js';

/** A new signing secret: `whsec_` + base64 of 32 random bytes. */
export function generateSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(32).toString('base64');
}

function secretKey(secret: string): Buffer {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) throw new Error('A webhook secret must start with whsec_');
  const key = Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64');
  if (key.length === 0) throw new Error('A webhook secret must carry base64 key bytes after whsec_');
  return key;
}

/** `v1,<base64 HMAC-SHA256 of "msgId.timestamp.body">`, over the body's exact bytes. */
export function sign(secret: string, msgId: string, timestampSeconds: number, body: string | Buffer): string {
  if (!Number.isSafeInteger(timestampSeconds)) throw new Error('The webhook timestamp must be whole seconds');
  const hmac = createHmac('sha256', secretKey(secret));
  hmac.update(`${msgId}.${timestampSeconds}.`);
  hmac.update(body);
  return `v1,${hmac.digest('base64')}`;
}

/**
 * The `webhook-signature` value: one signature per secret, space-separated, so a receiver still holding
 * the previous secret keeps verifying during its grace window after a regeneration.
 */
export function signatureHeader(secrets: readonly string[], msgId: string, timestampSeconds: number, body: string | Buffer): string {
  if (secrets.length === 0) throw new Error('A webhook delivery needs at least one secret');
  return secrets.map((secret) => sign(secret, msgId, timestampSeconds, body)).join(' ');
}
