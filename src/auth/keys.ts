// API keys: `fnl_` + 32 random base62 characters + a 6-character CRC32 checksum, so a typo or a
// truncated key is refused without touching the database and leaked keys are easy to grep for.
// Only the SHA-256 of a key is stored; the key itself is shown once, at creation.
import { createHash, randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const KEY_PREFIX = 'fnl_';
const BODY_LENGTH = 32;
const CHECKSUM_LENGTH = 6;

function base62(bytes: Buffer, length: number): string {
  let out = '';
  for (const b of bytes) {
    if (b >= 248) continue; // 248 = 4 × 62: rejecting the rest keeps every character equally likely
    out += ALPHABET[b % 62];
    if (out.length === length) break;
  }
  return out;
}

function crc32(text: string): number {
  let crc = 0xffffffff;
  for (const byte of Buffer.from(text)) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function checksum(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = ALPHABET[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

export function generateApiKey(): string {
  let body = '';
  while (body.length < BODY_LENGTH) body += base62(randomBytes(48), BODY_LENGTH - body.length);
  return `${KEY_PREFIX}${body}${checksum(body)}`;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** The part of a key shown in listings. */
export function displayPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX.length + 6);
}

/** A key as `generateApiKey` makes them: the prefix, the body and its checksum (what BOOTSTRAP_API_KEY must be). */
export function isGeneratedKey(key: string): boolean {
  if (!key.startsWith(KEY_PREFIX)) return false;
  const rest = key.slice(KEY_PREFIX.length);
  if (rest.length !== BODY_LENGTH + CHECKSUM_LENGTH || !/^[0-9A-Za-z]+$/.test(rest)) return false;
  return checksum(rest.slice(0, BODY_LENGTH)) === rest.slice(BODY_LENGTH);
}

/**
 * Whether a presented key can be a key at all. Keys with the prefix must carry a valid checksum; others
 * only need to be a plausible token, so that bootstrap keys chosen before the start checked them
 * (stored only as hashes) keep working.
 */
export function isWellFormedKey(key: string): boolean {
  if (!/^[\x21-\x7e]{16,256}$/.test(key)) return false;
  return !key.startsWith(KEY_PREFIX) || isGeneratedKey(key);
}
