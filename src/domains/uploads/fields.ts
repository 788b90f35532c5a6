// Root fields of uploads. REST `POST /backend/uploads` streams the file in a handler route
// (handlers.ts); `uploadFile` is the same operation on /graphql, where the multipart request's file was
// spooled to a temporary file as it arrived (http/graphql-multipart.ts) and is streamed into storage.
import { listCount } from '../../schema/list-bounds.js';
import { builder } from '../../schema/builder.js';
import { MAX_FILE_BYTES } from '../../config.js';
import { idArg } from '../common/args.js';
import { SUCCESS, Success } from '../common/types.js';
import { recordUpload } from './create.js';
import { cleanupUploads, deleteUpload, getUpload, listUploads, setUploadStatus } from './service.js';
import { Upload, UploadCleanup, UploadFileTypeEnum, UploadStatusEnum } from './types.js';

builder.queryField('upload', (t) =>
  t.prismaField({
    type: Upload,
    description: 'One upload.',
    args: idArg('The upload.'),
    resolve: (query, _root, args, ctx) => getUpload(ctx, args.id, query),
  }),
);

builder.queryField('uploads', (t) =>
  t.prismaField({
    type: [Upload],
    extensions: listCount('uploads'),

    description: 'The organisation’s uploads, in creation order.',
    args: { tenant_id: t.arg({ type: 'UUID', description: 'The caller’s organisation (default); another organisation is not found.' }) },
    resolve: (query, _root, args, ctx) => listUploads(ctx, args.tenant_id, query),
  }),
);

builder.mutationField('uploadFile', (t) =>
  t.prismaField({
    type: Upload,
    description: 'Stores a file (at most 10 MB) as a PENDING upload. Its type is judged from its content.',
    args: {
      file: t.arg({ type: 'File', required: true, description: 'The file.' }),
      type: t.arg({ type: UploadFileTypeEnum, description: 'Default `media`. `audio` requires an audio file.' }),
      folder: t.arg.string({ description: 'An optional label (up to 100 of A-Z a-z 0-9 _ - . in parts separated by /).' }),
    },
    resolve: async (_query, _root, args, ctx) => {
      const stored = await ctx.storage.put(args.file.stream(), { maxBytes: MAX_FILE_BYTES });
      return recordUpload(ctx, { ...stored, filename: args.file.name, declaredType: args.file.type }, args);
    },
  }),
);

builder.mutationField('updateUploadStatus', (t) =>
  t.prismaField({
    type: Upload,
    description: 'Sets an upload’s status: `ASSOCIATED` protects it from cleanup, `PENDING` makes it eligible again.',
    args: { ...idArg('The upload.'), status: t.arg({ type: UploadStatusEnum, required: true, description: 'The new status.' }) },
    resolve: (query, _root, args, ctx) => setUploadStatus(ctx, args.id, args.status, query),
  }),
);

builder.mutationField('deleteUpload', (t) =>
  t.field({
    type: Success,
    description: 'Deletes an upload: its record and its stored file. Its file_url answers 404 from then on.',
    args: idArg('The upload.'),
    resolve: async (_root, args, ctx) => (await deleteUpload(ctx, args.id), SUCCESS),
  }),
);

builder.mutationField('cleanupUploads', (t) =>
  t.field({
    type: UploadCleanup,
    description: 'Deletes the organisation’s PENDING uploads older than `hours`, records and files (owner or admin).',
    args: { hours: t.arg.int({ description: 'Age in hours, 0 to 87600; default 24.' }) },
    resolve: (_root, args, ctx) => cleanupUploads(ctx, args.hours),
  }),
);
