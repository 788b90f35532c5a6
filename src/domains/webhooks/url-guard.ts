// Registration-time check of a webhook URL. It refuses what can be seen now (scheme, userinfo, a host that
// is or resolves to a non-public address); the delivery agent checks the address actually connected to,
// which also covers DNS answers that change after registration (deliver.ts).
import { lookup as dnsLookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { invalidField } from '../../errors.js';

const MAX_URL_LENGTH = 2048;
/** A resolver that does not answer in time does not block registration; the delivery agent still guards. */
const LOOKUP_TIMEOUT_MS = 5000;
/** IPv6 global unicast (2000::/3): everything outside it is loopback, mapped, local, NAT64 or unassigned. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/** Every address a host name resolves to. */
export type Resolver = (hostname: string) => Promise<string[]>;

const systemResolver: Resolver = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

export interface WebhookUrlOptions {
  /** WEBHOOK_ALLOW_PRIVATE_URLS: accept http and private, loopback and link-local hosts. */
  allowPrivate: boolean;
  resolve?: Resolver;
  /** The field the messages name (a channel's `config.api_url` follows the same rules); default `url`. */
  field?: string;
}

/**
 * Whether an address may receive deliveries: ipaddr.js's `unicast` range only (so not private, loopback,
 * link-local with its metadata services, CGNAT, unspecified, multicast, reserved, IPv4-mapped, 6to4,
 * Teredo…), the rule the delivery connector (deliver.ts) and request-filtering-agent apply at connect time, and
 * for IPv6 global unicast only.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.range() !== 'unicast') return false;
  return parsed.kind() === 'ipv4' || (parsed as ipaddr.IPv6).match(GLOBAL_UNICAST_V6);
}

/** Names that are loopback by definition (RFC 6761), whatever a resolver says. */
function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/** Resolved addresses, or null when the name does not resolve now (not evidence of a private address). */
async function resolveOrNull(hostname: string, resolve: Resolver): Promise<string[] | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((done) => {
    timer = setTimeout(() => done(null), LOOKUP_TIMEOUT_MS);
  });
  try {
    return await Promise.race([resolve(hostname), timeout]);
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Validates a webhook URL for registration and returns it normalised (WHATWG URL, so decimal, octal and
 * hex IPv4 forms are already dotted quads). Throws INVALID_INPUT with a Portuguese message.
 */
export async function validateWebhookUrl(raw: string, options: WebhookUrlOptions): Promise<string> {
  const field = options.field ?? 'url';
  const text = raw.trim();
  if (!text) throw invalidField(field, 'é obrigatório');
  if (text.length > MAX_URL_LENGTH) throw invalidField(field, `aceita no máximo ${MAX_URL_LENGTH} caracteres`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalidField(field, 'deve ser uma URL válida, por exemplo https://exemplo.com.br/webhooks');
  }
  const schemes = options.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    throw invalidField(field, options.allowPrivate ? 'deve usar http ou https' : 'deve usar https');
  }
  if (url.username || url.password) throw invalidField(field, 'não pode conter usuário ou senha');
  if (options.allowPrivate) return url.href;

  const refused = invalidField(field, 'aponta para um endereço privado, local ou reservado; use um endereço público');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (ipaddr.isValid(host)) {
    if (!isPublicAddress(host)) throw refused;
    return url.href;
  }
  if (isLocalhostName(host)) throw refused;
  const addresses = await resolveOrNull(host, options.resolve ?? systemResolver);
  if (addresses?.some((address) => !isPublicAddress(address))) throw refused;
  return url.href;
}
