// Uploads and the public media proxy (bare style). Any valid key may upload, read, re-label and delete its
// organisation's uploads; cleanup and the organisation's listing need uploads.manage (owner, admin).
import { defineDomain } from '../manifest.js';
import { startUploadsUpkeep, uploadCleanupQueue } from './cleanup-job.js';
import { mediaProxyHandler, uploadHandler } from './handlers.js';
import { MEDIA_PROXY_PATH } from './media-url.js';
import { MEDIA_PROXY_DOCS } from './media-proxy-docs.js';
import './fields.js';

export const uploadsDomain = defineDomain({
  name: 'uploads',
  description: 'Files: multipart uploads, their records, and the public media proxy that serves them. Bare style.',
  permissions: [
    {
      name: 'uploads.manage',
      roles: ['owner', 'admin'],
      description: 'Clean up pending uploads and list every upload of the organisation.',
    },
  ],
  queues: [uploadCleanupQueue],
  storedFiles: [{ table: 'uploads', key: 'storage_key', contentType: 'mime_type' }],
  // In the background: the sweep may take a while on a large store.
  onStart: ({ db, storage }) => void startUploadsUpkeep(db.prisma, storage),
  fields: { 'Mutation.uploadFile': 'member' },
  routes: [
    {
      method: 'POST',
      path: '/uploads',
      handler: uploadHandler,
      style: 'bare',
      access: 'member',
      summary: 'Upload a file (multipart: file, type, folder)',
      openapi: {
        like: 'Mutation.uploadFile',
        description:
          'multipart/form-data, streamed: the file goes to storage as it arrives; past 10 MB the answer is 413 at once and nothing is kept.',
      },
    },
    {
      method: 'POST',
      path: '/uploads/cleanup',
      field: 'Mutation.cleanupUploads',
      style: 'bare',
      query: ['hours'],
      access: 'uploads.manage',
      summary: 'Delete PENDING uploads older than hours',
    },
    {
      method: 'GET',
      path: '/uploads/tenant/:tenant_id',
      field: 'Query.uploads',
      style: 'bare',
      access: 'uploads.manage',
      summary: 'List the organisation’s uploads',
    },
    { method: 'GET', path: '/uploads/:id', field: 'Query.upload', style: 'bare', access: 'member', summary: 'Get an upload' },
    {
      method: 'PUT',
      path: '/uploads/:id/status',
      field: 'Mutation.updateUploadStatus',
      style: 'bare',
      access: 'member',
      summary: 'Set an upload’s status',
    },
    {
      method: 'DELETE',
      path: '/uploads/:id',
      field: 'Mutation.deleteUpload',
      style: 'bare',
      access: 'member',
      summary: 'Delete an upload and its file',
    },
    {
      method: 'GET',
      path: `${MEDIA_PROXY_PATH}/*`,
      absolute: true,
      handler: mediaProxyHandler,
      style: 'bare',
      access: 'public',
      summary: 'Public file access (GET and HEAD)',
      openapi: MEDIA_PROXY_DOCS,
    },
  ],
});
