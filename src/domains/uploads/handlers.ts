// The two routes that are not GraphQL fields: the streamed upload (the file goes from the socket to
// storage as it arrives, never whole in memory) and the public media proxy.
import type { Config } from '../../config.js';
import type { Upload } from '../../generated/prisma/client.js';
import { notFound, invalidField } from '../../errors.js';
import type { HandlerInput } from '../manifest.js';
import { readMultipartUpload } from '../../storage/multipart-stream.js';
import { serveFile } from '../../storage/serve.js';
import { isStorageKey } from '../../storage/storage.js';
import { recordUpload } from './create.js';
import { mediaUrl } from './media-url.js';
import { recordedContentType } from './stored-keys.js';

/** `POST /backend/uploads`: multipart `file` (required), `type`, `folder`. 413 past 10 MB, as soon as the stream passes it. */
export async function uploadHandler({ request, ctx }: HandlerInput) {
  const { fields, file } = await readMultipartUpload(request, ctx.storage);
  if (!file) throw invalidField('file', '(arquivo) é obrigatório');
  const upload = await recordUpload(ctx, file, { type: fields.type, folder: fields.folder });
  return uploadBody(upload, ctx.config);
}

/** The REST shape of an upload: the fields of the GraphQL `Upload` type, as its routes answer them. */
function uploadBody(upload: Upload, config: Config) {
  return {
    id: upload.id,
    tenant_id: upload.tenant_id,
    filename: upload.filename,
    file_type: upload.file_type,
    file_url: mediaUrl(config, upload.storage_key),
    mime_type: upload.mime_type,
    size: upload.size,
    status: upload.status,
    folder: upload.folder,
    created_at: upload.created_at.toISOString(),
    updated_at: upload.updated_at.toISOString(),
  };
}

/**
 * `GET|HEAD /media/proxy/{path}`: public. The path must be exactly the key of a live record (an upload or
 * a media message, of any organisation: the key is the secret) whose file is a regular file in storage;
 * anything else is 404.
 */
export async function mediaProxyHandler({ request, params, ctx }: HandlerInput) {
  const key = params.path;
  if (!isStorageKey(key)) throw fileNotFound();
  // The unscoped client: the public proxy has no organisation, only the key.
  const contentType = await recordedContentType(ctx.prisma, key, ctx.direct);
  if (!contentType) throw fileNotFound();
  const opened = await ctx.storage.open(key);
  if (!opened) throw fileNotFound();
  return serveFile(request, opened, { contentType });
}

const fileNotFound = () => notFound('Arquivo');
