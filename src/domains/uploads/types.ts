// GraphQL types of uploads: the upload record (its file_url points at the public media proxy) and the
// cleanup result.
import { builder } from '../../schema/builder.js';
import { mediaUrl } from './media-url.js';

export const UploadFileTypeEnum = builder.enumType('UploadFileType', {
  description: 'What an upload is for: `media` (any file: images, video, documents) or `audio` (an audio file, e.g. a voice message).',
  values: { media: { value: 'media' }, audio: { value: 'audio' } } as const,
});

export const UploadStatusEnum = builder.enumType('UploadStatus', {
  description: '`PENDING` (new; removed by cleanup once old enough) or `ASSOCIATED` (in use; kept by cleanup).',
  values: { PENDING: { value: 'PENDING' }, ASSOCIATED: { value: 'ASSOCIATED' } } as const,
});

export const Upload = builder.prismaObject('Upload', {
  description: 'A stored file of the organisation, publicly readable at its `file_url`.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    tenant_id: t.expose('tenant_id', { type: 'UUID' }),
    filename: t.exposeString('filename', { description: 'The name the file was sent with, without its extension.' }),
    file_type: t.expose('file_type', { type: UploadFileTypeEnum }),
    file_url: t.string({
      description: 'Public address of the file under the media proxy: unguessable, no key needed.',
      select: { storage_key: true },
      resolve: (upload, _args, ctx) => mediaUrl(ctx.config, upload.storage_key),
    }),
    mime_type: t.exposeString('mime_type', { description: 'Judged from the content, not from the name or the declared type.' }),
    size: t.exposeInt('size', { description: 'Bytes.' }),
    status: t.expose('status', { type: UploadStatusEnum }),
    folder: t.exposeString('folder', {
      nullable: true,
      description: 'The label given at upload, if any (not a location: the file_url does not depend on it).',
    }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    updated_at: t.expose('updated_at', { type: 'DateTime' }),
  }),
});

export const UploadCleanup = builder.objectRef<{ deleted_count: number }>('UploadCleanup').implement({
  description: 'The result of a cleanup.',
  fields: (t) => ({ deleted_count: t.exposeInt('deleted_count', { description: 'Uploads removed, record and file.' }) }),
});
