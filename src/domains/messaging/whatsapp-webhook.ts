// The WhatsApp Cloud API connected straight to a channel (decisions.md "Messaging and channels"):
// GET answers the provider's verification challenge when `hub.verify_token` is the channel's; POST
// takes the provider's webhook, authenticated by X-Hub-Signature-256 (HMAC-SHA256 of the raw body with
// the channel's app_secret) instead of an API key. Messages go through the same service as
// POST /channels/{id}/inbound (the sender by BSUID, phone or both: `messages[].from_user_id` and
// `from`, completed by the `contacts[]` entry with the same `user_id` or `wa_id`, which also gives its
// name and username), statuses through the same rule as status callbacks, matched by message id
// whatever recipient fields they carry. A provider retry of
// a message already stored changes nothing. Each message and status of a batch is handled on its own:
// one that is malformed (a number where text belongs, a NUL, an unpaired surrogate: what PostgreSQL
// cannot store) or refused is logged and skipped, the others are stored, and the answer is 200, so the
// provider does not resend the batch forever.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { HandlerInput } from '../manifest.js';
import { AppError, invalidInput, notFound } from '../../errors.js';
import type { Channel, PrismaClient } from '../../generated/prisma/client.js';
import { readLimitedBody } from '../../http/body.js';
import { log } from '../../log.js';
import { isUuid } from '../common/validate.js';
import { whatsAppConfig } from './channels.js';
import { receiveMessage } from './inbound.js';
import { advanceSentByProviderId, advanceStatus, REPORTED_STATUSES, type ReportedStatus } from './status.js';
import { tenantClientsOf } from '../../db/tenant-scope.js';
import type { DirectSql } from '../../db/direct.js';

const MAX_WEBHOOK_BYTES = 1024 * 1024;

type WebhookChannel = Pick<Channel, 'id' | 'tenant_id' | 'provider' | 'config'>;

/** The provider's URL names the channel alone: found by its own index on id, across organisations (on `pg` where there is one: every notification reads it). */
async function whatsAppChannel(prisma: PrismaClient, direct: DirectSql | undefined, id: string): Promise<WebhookChannel> {
  if (!isUuid(id)) throw notFound('Canal');
  const [channel] = direct
    ? await direct.query<WebhookChannel>(
        'SELECT id::text AS id, tenant_id::text AS tenant_id, provider::text AS provider, config FROM channels WHERE id = $1::uuid',
        [id],
      )
    : await prisma.channel.findMany({ where: { id }, select: { id: true, tenant_id: true, provider: true, config: true }, take: 1 });
  if (!channel || channel.provider !== 'whatsapp_cloud') throw notFound('Canal');
  return channel;
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** X-Hub-Signature-256 is `sha256=` and the hex HMAC-SHA256 of the exact bytes received. */
export function validSignature(raw: Uint8Array, header: string | null, appSecret: string): boolean {
  if (!header?.startsWith('sha256=')) return false;
  const expected = createHmac('sha256', appSecret).update(raw).digest('hex');
  return sameText(header.slice('sha256='.length).toLowerCase(), expected);
}

export async function verifyWebhook({ url, params, ctx }: HandlerInput): Promise<Response> {
  const channel = await whatsAppChannel(ctx.prisma, ctx.direct, params.id);
  const expected = whatsAppConfig(channel).verify_token;
  const token = url.searchParams.get('hub.verify_token');
  const challenge = url.searchParams.get('hub.challenge');
  if (url.searchParams.get('hub.mode') !== 'subscribe' || !expected || token === null || !sameText(token, expected) || challenge === null) {
    throw new AppError('FORBIDDEN', 'Verificação do webhook recusada');
  }
  return new Response(challenge, {
    status: 200,
    headers: { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' },
  });
}

// The parts of the provider's payload read here (entry[].changes[].value).
interface WhatsAppMessage {
  id?: string;
  from?: string;
  from_user_id?: string;
  type?: string;
  text?: { body?: string };
  button?: { text?: string };
  interactive?: { button_reply?: { title?: string }; list_reply?: { title?: string } };
  [media: string]: unknown;
}
interface WhatsAppStatus {
  id?: string;
  status?: string;
  errors?: { code?: number; title?: string; message?: string; error_data?: { details?: string } }[];
}
interface WhatsAppContact {
  wa_id?: unknown;
  user_id?: unknown;
  profile?: { name?: unknown; username?: unknown };
}
interface ChangeValue {
  metadata?: { phone_number_id?: string };
  contacts?: WhatsAppContact[];
  messages?: WhatsAppMessage[];
  statuses?: WhatsAppStatus[];
}

/** What the conversation shows for a message: its text, a media caption, or the type in brackets. */
function contentOf(message: WhatsAppMessage): string {
  const type = message.type ?? 'text';
  const caption = (message[type] as { caption?: unknown } | undefined)?.caption;
  const text =
    message.text?.body ??
    message.button?.text ??
    message.interactive?.button_reply?.title ??
    message.interactive?.list_reply?.title ??
    (typeof caption === 'string' ? caption : undefined);
  // Cut at a character, never between the two halves of a surrogate pair.
  return text?.slice(0, /[\uD800-\uDBFF]/.test(text.charAt(4095)) ? 4095 : 4096) || `[${type}]`;
}

function statusError(status: WhatsAppStatus): string | null {
  const e = status.errors?.[0];
  if (!e) return null;
  const head = [e.code !== undefined ? `(#${e.code})` : '', e.title ?? e.message ?? ''].filter(Boolean).join(' ');
  return (e.error_data?.details ? `${head}: ${e.error_data.details}` : head).slice(0, 1000);
}

/** Text PostgreSQL can store: a string without NUL and without an unpaired UTF-16 surrogate. */
function isText(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    !value.includes('\0') &&
    !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value)
  );
}

const optionalText = (value: unknown) => value === undefined || value === null || isText(value);

/** Every text of the message that is read is text (or absent); `id` and `from` or `from_user_id` are present. */
function wellFormedMessage(message: unknown): message is WhatsAppMessage & { id: string } {
  if (!message || typeof message !== 'object') return false;
  const m = message as WhatsAppMessage;
  if (!optionalText(m.from) || !optionalText(m.from_user_id) || !(m.from || m.from_user_id)) return false;
  if (!isText(m.id) || !optionalText(m.type)) return false;
  const type = m.type ?? 'text';
  const caption = (m[type] as { caption?: unknown } | undefined)?.caption;
  return [m.text?.body, m.button?.text, m.interactive?.button_reply?.title, m.interactive?.list_reply?.title, caption].every(optionalText);
}

function wellFormedStatus(status: unknown): status is WhatsAppStatus & { id: string; status: ReportedStatus } {
  if (!status || typeof status !== 'object') return false;
  const s = status as WhatsAppStatus;
  if (!isText(s.id) || !REPORTED_STATUSES.includes(s.status as ReportedStatus)) return false;
  if (s.errors === undefined) return true;
  if (!Array.isArray(s.errors)) return false;
  const e = s.errors[0];
  if (e === undefined) return true;
  if (!e || typeof e !== 'object') return false;
  return (
    (e.code === undefined || typeof e.code === 'number') &&
    optionalText(e.title) &&
    optionalText(e.message) &&
    optionalText(e.error_data?.details)
  );
}

/** An array field of the payload, or none when it is anything else. */
const listOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

function changesOf(payload: unknown): ChangeValue[] {
  const entries = (payload as { entry?: unknown })?.entry;
  if (!Array.isArray(entries)) throw invalidInput('Payload do WhatsApp sem entry');
  return (entries as unknown[])
    .flatMap((entry) => {
      const changes = (entry as { changes?: unknown } | null)?.changes;
      return Array.isArray(changes) ? (changes as unknown[]) : [];
    })
    .flatMap((change) => {
      const value = (change as { value?: unknown } | null)?.value;
      return value && typeof value === 'object' ? [value as ChangeValue] : [];
    });
}

export async function receiveWebhook({ request, params, ctx }: HandlerInput) {
  const channel = await whatsAppChannel(ctx.prisma, ctx.direct, params.id);
  const config = whatsAppConfig(channel);
  const raw = await readLimitedBody(request, MAX_WEBHOOK_BYTES);
  if (!config.app_secret || !validSignature(raw, request.headers.get('x-hub-signature-256'), config.app_secret)) {
    throw new AppError('UNAUTHORIZED', 'Assinatura X-Hub-Signature-256 ausente ou inválida');
  }
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(raw).toString('utf8'));
  } catch {
    throw invalidInput('O corpo deve ser JSON');
  }
  const db = tenantClientsOf(ctx.prisma, ctx.direct).for(channel.tenant_id);
  let messages = 0;
  let statuses = 0;
  const skip = (what: 'message' | 'status', reason: string) =>
    log.warn(`whatsapp webhook: ${what} skipped`, { channelId: channel.id, reason });
  for (const value of changesOf(payload)) {
    // A change for another phone number of the same app is not this channel's.
    if (value.metadata?.phone_number_id && value.metadata.phone_number_id !== config.phone_number_id) continue;
    const contacts = listOf(value.contacts).filter((c): c is WhatsAppContact => !!c && typeof c === 'object');
    for (const message of listOf(value.messages)) {
      if (!wellFormedMessage(message)) {
        skip('message', 'malformed');
        continue;
      }
      const contact = contacts.find(
        (c) => (message.from_user_id && c.user_id === message.from_user_id) || (message.from && c.wa_id === message.from),
      );
      const text = (value: unknown) => (isText(value) && value ? value : undefined);
      try {
        const stored = await receiveMessage(db, ctx.config, channel.id, {
          from: message.from || text(contact?.wa_id),
          userId: message.from_user_id || text(contact?.user_id),
          username: text(contact?.profile?.username)?.slice(0, 64),
          content: contentOf(message),
          name: text(contact?.profile?.name),
          type: (message.type ?? 'text').slice(0, 32),
          providerMessageId: message.id,
        });
        if (stored) messages++;
      } catch (e) {
        // One unreadable sender, or a channel deleted meanwhile, must not make the provider resend the
        // others forever.
        if (!(e instanceof AppError && (e.kind === 'INVALID_INPUT' || e.kind === 'NOT_FOUND'))) throw e;
        skip('message', e.message);
      }
    }
    for (const status of listOf(value.statuses)) {
      if (!wellFormedStatus(status)) {
        skip('status', 'malformed or not reported');
        continue;
      }
      const change = { status: status.status, error: statusError(status) };
      if (await advanceSentByProviderId(db, channel.id, status.id, change)) {
        statuses++;
        continue;
      }
      const target = await db.message.findFirst({
        where: { channel_id: channel.id, role: 'assistant', provider_message_id: status.id },
        select: { id: true },
      });
      if (!target) continue;
      await db.$transaction((tx) => advanceStatus(tx, ctx.config, target.id, change));
      statuses++;
    }
  }
  return { messages, statuses };
}
