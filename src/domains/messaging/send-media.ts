// POST /backend/messages/send-media: a file sent to a phone
// through a channel. The file is streamed into storage as it arrives (like an upload) and judged by its
// bytes; then, in one transaction, the channel (502 CHANNEL_ERROR when unusable), the recipient's lead
// (found or created by phone, `lead.created`), on a WhatsApp Cloud channel an open 24-hour window (422
// WINDOW_CLOSED), the open conversation (created if none, with the
// channel's department; the sender must see it), the message stored `pending` with the file and a
// `messages.deliver` job, which hands the provider the file's media proxy address. Any refusal or
// failure after the file is stored removes it: a failed request leaves no file and no record.
import type { Context } from '../../context/context.js';
import { invalidInput, invalidField } from '../../errors.js';
import type { Message } from '../../generated/prisma/client.js';
import { log } from '../../log.js';
import { contentTypeOf, type IncomingFile } from '../uploads/create.js';
import { isUuid } from '../common/validate.js';
import { recipientPhone } from '../common/phone.js';
import { chooseChannel, conversationToWrite, queueDelivery, visibleOpenConversation } from './send.js';
import { appendMessage, leadForPhone, type MessageMedia } from './store.js';
import { assertWindowOpen } from './window.js';
import { requireTenant } from '../../auth/viewer.js';

export const MEDIA_TYPES = ['image', 'audio', 'video', 'document'] as const;
export type MediaType = (typeof MEDIA_TYPES)[number];

/** What each type accepts, judged on the content (decisions.md); a document may be any file. */
const ACCEPTED: Record<Exclude<MediaType, 'document'>, readonly string[]> = {
  image: ['image/jpeg', 'image/png', 'image/webp'],
  // Ogg with Opus (WhatsApp's voice notes) sniffs as `audio/ogg; codecs=opus`: the essence is compared.
  audio: ['audio/ogg', 'audio/mpeg', 'audio/mp4', 'audio/aac', 'audio/amr'],
  video: ['video/mp4', 'video/3gpp'],
};

/** The WhatsApp Cloud API's caption limit; audio takes no caption. */
export const CAPTION_MAX = 1024;
const FILENAME_MAX = 255;

/** The form's text fields (REST) or the mutation's arguments (GraphQL), unchecked. */
export interface MediaInput {
  channel_id?: string | null;
  remote_jid?: string | null;
  message_type?: string | null;
  content?: string | null;
}

function mediaType(value: string | null | undefined): MediaType {
  if (!value) throw invalidField('message_type', `é obrigatório (${MEDIA_TYPES.join(', ')})`);
  if (!(MEDIA_TYPES as readonly string[]).includes(value)) throw invalidField('message_type', `deve ser um de: ${MEDIA_TYPES.join(', ')}`);
  return value as MediaType;
}

/** The caption: optional, kept as written, at most 1,024 characters; an audio has none. */
function caption(type: MediaType, value: string | null | undefined): string {
  if (value == null || value === '') return '';
  if (type === 'audio') throw invalidInput('Mensagens de áudio não aceitam legenda (content)');
  if (value.length > CAPTION_MAX) throw invalidField('content', `(legenda) aceita no máximo ${CAPTION_MAX} caracteres`);
  return value;
}

/** The client's name without any directory part, for a document's name on the recipient's phone. */
function displayName(name: string): string | null {
  const base = name
    .slice(Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\')) + 1)
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim();
  return base ? base.slice(0, FILENAME_MAX) : null;
}

async function checkedMedia(type: MediaType, file: IncomingFile): Promise<MessageMedia> {
  if (file.size === 0) throw invalidInput('O arquivo está vazio');
  const mimeType = await contentTypeOf(file);
  if (type !== 'document' && !ACCEPTED[type].includes(mimeType.split(';')[0].trim())) {
    throw invalidInput(`O arquivo não é um ${type} aceito (${mimeType}); aceitos: ${ACCEPTED[type].join(', ')}`);
  }
  return { key: file.key, mimeType, size: file.size, filename: displayName(file.filename) };
}

/**
 * Sends a file already in storage (`file.key`). Every refusal is thrown after the file is removed; the
 * checks that need no database (fields, phone, content) come first.
 */
export async function sendMedia(ctx: Context, file: IncomingFile, input: MediaInput): Promise<Message> {
  let message: Message;
  try {
    requireTenant(ctx.viewer);
    if (!input.channel_id) throw invalidField('channel_id', 'é obrigatório');
    if (!isUuid(input.channel_id)) throw invalidField('channel_id', 'deve ser um UUID');
    if (!input.remote_jid) throw invalidField('remote_jid', 'é obrigatório');
    const type = mediaType(input.message_type);
    const content = caption(type, input.content);
    const phone = recipientPhone(input.remote_jid);
    const media = await checkedMedia(type, file);
    const channelId = input.channel_id;
    message = await ctx.db.$transaction(async (tx) => {
      const channel = await chooseChannel(tx, channelId);
      const lead = await leadForPhone(tx, phone, phone);
      const open = await visibleOpenConversation(tx, lead.id);
      assertWindowOpen(channel, open);
      const conversation = await conversationToWrite(tx, lead, open, channel);
      const stored = await appendMessage(tx, ctx.config, conversation, {
        role: 'assistant',
        status: 'pending',
        type,
        content,
        channel_id: channel.id,
        media,
        answers: true,
      });
      await queueDelivery(tx, stored);
      return stored;
    });
  } catch (error) {
    await ctx.storage
      .delete(file.key)
      .catch((e) => log.error('could not remove the file of a refused media message', { key: file.key, error: String(e) }));
    throw error;
  }
  return message;
}
