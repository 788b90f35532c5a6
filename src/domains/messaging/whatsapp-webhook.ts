// The WhatsApp Cloud API connected straight to a channel (decisions.md "Messaging and channels"):
// GET answers the provider's verification challenge when `hub.verify_token` is the channel's; POST
// takes the provider's webhook, authenticated by X-Hub-Signature-256 (HMAC-SHA256 of the raw body with
// the channel's app_secret) instead of an API key. Messages go through the same service as
// POST /channels/{id}/inbound, statuses through the same rule as status callbacks. A provider retry of
// a message already stored changes nothing.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { HandlerInput } from '../manifest.js';
import { AppError, invalidInput, notFound } from '../../errors.js';
import type { Channel, PrismaClient } from '../../generated/prisma/client.js';
import { readLimitedBody } from '../../http/body.js';
import { log } from '../../log.js';
import { isUuid } from '../common/validate.js';
import { whatsAppConfig } from './channels.js';
import { receiveMessage } from './inbound.js';
import { announceMessage } from './live.js';
import { advanceStatus, REPORTED_STATUSES, type ReportedStatus } from './status.js';
import { tenantDb } from './tenant-db.js';

const MAX_WEBHOOK_BYTES = 1024 * 1024;

async function whatsAppChannel(prisma: PrismaClient, id: string): Promise<Channel> {
  const channel = isUuid(id) ? await prisma.channel.findUnique({ where: { id } }) : null;
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
  const channel = await whatsAppChannel(ctx.prisma, params.id);
  const expected = whatsAppConfig(channel).verify_token;
  const token = url.searchParams.get('hub.verify_token');
  const challenge = url.searchParams.get('hub.challenge');
  if (url.searchParams.get('hub.mode') !== 'subscribe' || !expected || token === null || !sameText(token, expected) || challenge === null) {
    throw new AppError('FORBIDDEN', 'Verificação do webhook recusada');
  }
  return new Response(challenge, { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' } });
}

// The parts of the provider's payload read here (entry[].changes[].value).
interface WhatsAppMessage {
  id?: string;
  from?: string;
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
interface ChangeValue {
  metadata?: { phone_number_id?: string };
  contacts?: { wa_id?: string; profile?: { name?: string } }[];
  messages?: WhatsAppMessage[];
  statuses?: WhatsAppStatus[];
}

/** What the conversation shows for a message: its text, a media caption, or the type in brackets. */
function contentOf(message: WhatsAppMessage): string {
  const type = message.type ?? 'text';
  const caption = (message[type] as { caption?: unknown } | undefined)?.caption;
  const text =
    message.text?.body ?? message.button?.text ?? message.interactive?.button_reply?.title ?? message.interactive?.list_reply?.title ?? (typeof caption === 'string' ? caption : undefined);
  return text?.slice(0, 4096) || `[${type}]`;
}

function statusError(status: WhatsAppStatus): string | null {
  const e = status.errors?.[0];
  if (!e) return null;
  const head = [e.code !== undefined ? `(#${e.code})` : '', e.title ?? e.message ?? ''].filter(Boolean).join(' ');
  return (e.error_data?.details ? `${head}: ${e.error_data.details}` : head).slice(0, 1000);
}

function changesOf(payload: unknown): ChangeValue[] {
  const entries = (payload as { entry?: unknown })?.entry;
  if (!Array.isArray(entries)) throw invalidInput('Payload do WhatsApp sem entry');
  return entries.flatMap((entry) => (Array.isArray(entry?.changes) ? entry.changes : [])).flatMap((change: { value?: unknown }) => (change?.value && typeof change.value === 'object' ? [change.value as ChangeValue] : []));
}

export async function receiveWebhook({ request, params, ctx }: HandlerInput) {
  const channel = await whatsAppChannel(ctx.prisma, params.id);
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
  const db = tenantDb(ctx.prisma, channel.tenant_id);
  let messages = 0;
  let statuses = 0;
  for (const value of changesOf(payload)) {
    // A change for another phone number of the same app is not this channel's.
    if (value.metadata?.phone_number_id && value.metadata.phone_number_id !== config.phone_number_id) continue;
    const names = new Map((value.contacts ?? []).map((c) => [c.wa_id, c.profile?.name]));
    for (const message of value.messages ?? []) {
      if (!message.from || !message.id) continue;
      try {
        const stored = await receiveMessage(db, ctx.config, channel.id, { from: message.from, content: contentOf(message), name: names.get(message.from), type: (message.type ?? 'text').slice(0, 32), providerMessageId: message.id });
        if (stored) {
          announceMessage(ctx.config, channel.tenant_id, stored.message.id);
          messages++;
        }
      } catch (e) {
        // One unreadable sender must not make the provider resend the others forever.
        if (!(e instanceof AppError && e.kind === 'INVALID_INPUT')) throw e;
        log.warn('whatsapp webhook: message skipped', { channelId: channel.id, reason: e.message });
      }
    }
    for (const status of value.statuses ?? []) {
      if (!status.id || !REPORTED_STATUSES.includes(status.status as ReportedStatus)) continue;
      const target = await db.message.findFirst({ where: { channel_id: channel.id, role: 'assistant', provider_message_id: status.id }, select: { id: true } });
      if (!target) continue;
      await db.$transaction((tx) => advanceStatus(tx, ctx.config, target.id, { status: status.status as ReportedStatus, error: statusError(status) }));
      statuses++;
    }
  }
  return { messages, statuses };
}
