// POST /backend/messages/send-media as a handler route: the multipart body is streamed (the file part
// straight into storage, 413 past 10 MB as soon as the stream passes it), then send-media.ts takes over.
import type { HandlerInput } from '../manifest.js';
import { invalidField } from '../../errors.js';
import { readMultipartUpload } from '../../storage/multipart-stream.js';
import { sendMedia } from './send-media.js';
import { messageData } from './shapes.js';
import { requireTenant } from '../../auth/viewer.js';

export async function sendMediaHandler({ request, ctx }: HandlerInput) {
  requireTenant(ctx.viewer); // an organisation's key, before a byte is stored
  const { fields, file } = await readMultipartUpload(request, ctx.storage);
  if (!file) throw invalidField('file', '(arquivo) é obrigatório');
  const message = await sendMedia(ctx, file, fields);
  return messageData(message, ctx.config);
}
