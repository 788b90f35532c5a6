import { createHmac } from 'node:crypto';
import type http from 'node:http';

/** The signature a receiver computes by hand: base64 HMAC-SHA256 of "id.timestamp.body" keyed with the secret's bytes. */
export function plainSignature(secret: string, hit: { headers: http.IncomingHttpHeaders; body: Buffer }): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const signed = Buffer.concat([
    Buffer.from(`${String(hit.headers['webhook-id'])}.${String(hit.headers['webhook-timestamp'])}.`),
    hit.body,
  ]);
  return `v1,${createHmac('sha256', key).update(signed).digest('base64')}`;
}
