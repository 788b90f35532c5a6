// The load generator's own process (spawned by bench/autocannon.ts): runs autocannon's API with the options
// given as JSON in argv[2] and prints its result as JSON. The API, not the CLI: the CLI reads a body file
// (-i) as UTF-8 text, which turns binary bytes into U+FFFD replacement characters (random bytes grow by
// about 80 %, so the server receives neither the size nor the bytes the bench meant to send).
import type { EventEmitter } from 'node:events';
import fs from 'node:fs';
import autocannon from 'autocannon';
import type { LoadOptions } from './autocannon.js';

const { url, method, headers, body, bodyFile, connections, amount, duration, paths, vary } = JSON.parse(process.argv[2]) as LoadOptions & {
  url: string;
};
let sent = 0;
// autocannon ends a run at its next once-a-second tick, so a run of a fixed `amount` reports a duration
// rounded up to whole seconds (1.05 s of uploads counted as 2 s halved their MB/s): time it here instead,
// from the start to the last answer.
const started = performance.now();
let lastAnswer = started;
// Without a callback autocannon returns its EventEmitter made thenable (its types say only Promise).
const instance = autocannon({
  url,
  method: (method ?? 'GET') as autocannon.Request['method'],
  headers,
  body: bodyFile ? fs.readFileSync(bodyFile) : body,
  connections,
  ...(paths ? { requests: paths.map((path) => ({ method: 'GET' as const, path })) } : {}),
  // A body that changes from request to request: every placeholder becomes first + (n mod count).
  ...(vary
    ? {
        requests: [
          {
            setupRequest: (request: autocannon.Request) => ({
              ...request,
              body: (body ?? '').split(vary.placeholder).join(String(vary.first + (sent++ % vary.count))),
            }),
          },
        ],
      }
    : {}),
  ...(amount ? { amount } : { duration: duration ?? 5 }),
}) as unknown as EventEmitter & PromiseLike<autocannon.Result>;
instance.on('response', () => (lastAnswer = performance.now()));
const result = await instance;
process.stdout.write(JSON.stringify({ ...result, elapsedSeconds: (lastAnswer - started) / 1000 }));
