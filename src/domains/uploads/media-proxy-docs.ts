// The media proxy in the API reference: a binary answer (storage/serve.ts) with its caching and range
// headers, not JSON.
import type { RouteDocs } from '../manifest.js';

const text = { type: 'string' };
const header = (description: string, schema: Record<string, unknown> = text) => ({ description, schema });

const FILE_HEADERS = {
  ETag: header('Strong validator of the bytes; send it back in `If-None-Match` (or `If-Range`).'),
  'Last-Modified': header('When the file was stored (HTTP date).'),
  'Cache-Control': header('`public, max-age=86400`.'),
  'Accept-Ranges': header('`bytes`: one byte range may be asked for with `Range`.'),
};

const binary = { '*/*': { schema: { type: 'string', format: 'binary', contentMediaType: 'application/octet-stream' } } };

export const MEDIA_PROXY_DOCS: RouteDocs = {
  description:
    'The file whose storage key is `path` (the tail of an upload’s `file_url` or a message’s `media_url`): its bytes, with the type judged when it was stored. ' +
    'Types a browser would run (HTML, SVG, XML, scripts) are sent as `application/octet-stream` with `Content-Disposition: attachment`. ' +
    'HEAD answers the same headers without the body. Conditional requests (`If-None-Match`, `If-Modified-Since`) answer 304; one byte range (`Range: bytes=0-1023`, `bytes=-500`) answers 206.',
  parameters: [
    {
      name: 'Range',
      in: 'header',
      required: false,
      description: 'One byte range, e.g. `bytes=0-1023` or `bytes=-500`; several ranges or a malformed header get the whole file.',
      schema: text,
      example: 'bytes=0-1023',
    },
    {
      name: 'If-Range',
      in: 'header',
      required: false,
      description: 'The ETag or Last-Modified the client holds: the range is honoured only if the file still matches.',
      schema: text,
    },
    { name: 'If-None-Match', in: 'header', required: false, description: 'ETags the client holds: 304 when one matches.', schema: text },
    {
      name: 'If-Modified-Since',
      in: 'header',
      required: false,
      description: 'An HTTP date: 304 when the file is not newer (ignored with `If-None-Match`).',
      schema: text,
    },
  ],
  responses: {
    200: {
      description: 'The whole file.',
      headers: { ...FILE_HEADERS, 'Content-Length': header('Bytes.', { type: 'integer' }) },
      content: binary,
    },
    206: {
      description: 'The byte range asked for.',
      headers: {
        ...FILE_HEADERS,
        'Content-Range': header('`bytes start-end/size`.'),
        'Content-Length': header('Bytes in this part.', { type: 'integer' }),
      },
      content: binary,
    },
    304: { description: 'Not modified: the copy the client holds is current. No body.', headers: FILE_HEADERS },
    416: { description: 'The range starts past the end of the file. No body.', headers: { 'Content-Range': header('`bytes */size`.') } },
  },
};
