// The REST reference: the OpenAPI document at /backend/openapi.json and Swagger UI at /backend/docs,
// served from the swagger-ui-dist package on disk, so the page works offline and sends no request
// anywhere but this server (no CDN, no online validator).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const DOCS = '/backend/docs';
const DOCUMENT = '/backend/openapi.json';

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>Funil REST API</title>
    <link rel="stylesheet" href="${DOCS}/swagger-ui.css" />
    <link rel="icon" href="${DOCS}/favicon-32x32.png" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${DOCS}/swagger-ui-bundle.js"></script>
    <script src="${DOCS}/init.js"></script>
  </body>
</html>
`;

// Authorize once (the key is kept in this browser only), then "Try it out" on any operation.
const INIT = `window.ui = SwaggerUIBundle({
  url: '${DOCUMENT}',
  dom_id: '#swagger-ui',
  validatorUrl: null,
  deepLinking: true,
  docExpansion: 'list',
  persistAuthorization: true,
});
`;

const assetDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** Serves the document and the reference; null for any other request. */
export function createApiReference(document: () => unknown) {
  let json: string | undefined;
  const files = new Map<string, Uint8Array<ArrayBuffer>>();
  return function serve(request: Request): Response | null {
    if (request.method !== 'GET' && request.method !== 'HEAD') return null;
    const { pathname } = new URL(request.url);
    if (pathname === DOCUMENT) {
      json ??= JSON.stringify(document());
      return new Response(json, { headers: { 'content-type': 'application/json; charset=utf-8' } });
    }
    if (pathname === DOCS || pathname === `${DOCS}/`)
      return new Response(PAGE, { headers: { 'content-type': 'text/html; charset=utf-8' } });
    if (pathname === `${DOCS}/init.js`) return new Response(INIT, { headers: { 'content-type': 'text/javascript; charset=utf-8' } });
    const asset = pathname.startsWith(`${DOCS}/`) ? pathname.slice(DOCS.length + 1) : '';
    if (ASSETS[asset]) {
      if (!files.has(asset)) files.set(asset, new Uint8Array(fs.readFileSync(path.join(assetDir, asset))));
      return new Response(files.get(asset), { headers: { 'content-type': ASSETS[asset], 'cache-control': 'public, max-age=3600' } });
    }
    return null;
  };
}
