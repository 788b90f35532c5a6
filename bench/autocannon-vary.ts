// autocannon's programmatic API, for a body that changes from request to request (LoadOptions.vary in
// bench/autocannon.ts): every `placeholder` in the body becomes `first + (n mod count)`, n counting the
// requests sent. Run in its own process like the CLI; prints the same JSON result as `autocannon -j`.
import autocannon from 'autocannon';
import type { LoadOptions } from './autocannon.js';

const { url, opts } = JSON.parse(process.argv[2]) as { url: string; opts: LoadOptions & { vary: NonNullable<LoadOptions['vary']> } };
const { placeholder, first, count } = opts.vary;
const body = opts.body ?? '';
let sent = 0;
const result = await autocannon({
  url,
  connections: opts.connections,
  ...(opts.amount ? { amount: opts.amount } : { duration: opts.duration ?? 5 }),
  method: opts.method ?? 'GET',
  headers: opts.headers,
  requests: [{ setupRequest: (request) => ({ ...request, body: body.split(placeholder).join(String(first + (sent++ % count))) }) }],
});
process.stdout.write(JSON.stringify(result));
