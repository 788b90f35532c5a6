// The live subscribers' own process (spawned by bench/subscribers.ts), so that the server's memory and
// event loop are its own: opens every subscription of the plan in the file argv[2] names (dealChanged over WebSocket, graphql-ws,
// one socket each, or over SSE, one POST each), then talks over stdin/stdout in JSON lines:
//   → {"connected": n}                 once every socket is acknowledged and every stream answered 200
//   → {"reached": n}                   every second: subscribers that have received an event
//   ← "reset"                          forgets the latencies so far (the warm-up's)
//   ← "stop"                           then → {"latencies": {ws: [...], sse: [...]}, "errors": n}
// An event's latency: its receipt minus the time the bench wrote into the deal's note (`t=<ms>`).
import fs from 'node:fs';
import { createInterface } from 'node:readline';
import { createClient } from 'graphql-ws';
import { Agent, fetch } from 'undici';
import WebSocket from 'ws';

interface Plan {
  url: string;
  subscriptions: { key: string; pipelineId: string; transport: 'ws' | 'sse' }[];
}

const plan = JSON.parse(fs.readFileSync(process.argv[2], 'utf8')) as Plan;
const QUERY = 'subscription ($p: UUID!) { dealChanged(pipeline_id: $p) { kind deal { note } } }';
const latencies = { ws: [] as number[], sse: [] as number[] };
const reached = new Set<number>();
let errors = 0;
const send = (message: unknown) => process.stdout.write(`${JSON.stringify(message)}\n`);

function received(i: number, transport: 'ws' | 'sse', note: unknown) {
  reached.add(i);
  const t = typeof note === 'string' && note.startsWith('t=') ? Number(note.slice(2)) : NaN;
  if (Number.isFinite(t)) latencies[transport].push(Date.now() - t);
}

const dispatcher = new Agent({ connections: null, pipelining: 0, headersTimeout: 0, bodyTimeout: 0 });
const closers: (() => void)[] = [];

async function openWs(i: number, key: string, pipelineId: string) {
  const client = createClient({
    url: `${plan.url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${key}` },
    retryAttempts: 0,
    lazy: false,
  });
  await new Promise<void>((resolve, reject) => {
    client.on('connected', () => resolve());
    client.on('closed', (e) => reject(new Error(`socket closed: ${(e as { code?: number }).code}`)));
  });
  closers.push(
    client.subscribe<{ dealChanged: { deal: { note: string | null } | null } }>(
      { query: QUERY, variables: { p: pipelineId } },
      { next: (r) => (r.errors ? errors++ : received(i, 'ws', r.data?.dealChanged.deal?.note)), error: () => errors++, complete: () => {} },
    ),
  );
  closers.push(() => void client.dispose());
}

async function openSse(i: number, key: string, pipelineId: string) {
  const controller = new AbortController();
  const response = await fetch(`${plan.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query: QUERY, variables: { p: pipelineId } }),
    signal: controller.signal,
    dispatcher,
  });
  if (response.status !== 200 || !response.body) throw new Error(`SSE answered ${response.status}`);
  closers.push(() => controller.abort());
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body!) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block.split('\n').find((l) => l.startsWith('data:'));
          if (!data || data.length <= 6) continue;
          const payload = JSON.parse(data.slice(5)) as {
            data?: { dealChanged: { deal: { note: string | null } | null } };
            errors?: unknown;
          };
          if (payload.errors) errors++;
          else received(i, 'sse', payload.data?.dealChanged.deal?.note);
        }
      }
    } catch {
      // aborted at the end
    }
  })();
}

async function main() {
  // A few hundred at a time: the server accepts them as fast as it can, not all in one burst.
  const queue = plan.subscriptions.map((s, i) => ({ ...s, i }));
  const workers = Array.from({ length: 200 }, async () => {
    for (let s = queue.shift(); s; s = queue.shift())
      await (s.transport === 'ws' ? openWs(s.i, s.key, s.pipelineId) : openSse(s.i, s.key, s.pipelineId));
  });
  await Promise.all(workers);
  send({ connected: plan.subscriptions.length });
  const ticker = setInterval(() => send({ reached: reached.size }), 1_000);
  for await (const line of createInterface({ input: process.stdin })) {
    if (line.trim() === 'reset') {
      latencies.ws.length = latencies.sse.length = 0;
      errors = 0;
    }
    if (line.trim() !== 'stop') continue;
    clearInterval(ticker);
    send({ latencies, errors });
    for (const close of closers) close();
    setTimeout(() => process.exit(0), 500).unref();
    return;
  }
}

main().catch((e: unknown) => {
  send({ failed: String((e as Error)?.message ?? e) });
  process.exit(1);
});
