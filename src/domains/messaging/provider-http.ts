// One HTTP call to a messaging provider: a JSON POST with a deadline, redirects not followed, the
// answer read up to 64 KB. Unless private addresses are allowed (WEBHOOK_ALLOW_PRIVATE_URLS, for tests
// and local development), connections go only to public addresses, checked on the address resolved at
// connect time, as for webhooks: a channel's api_url cannot reach the internal network.
import http from 'node:http';
import https from 'node:https';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';

const MAX_ANSWER_BYTES = 64 * 1024;
export const PROVIDER_TIMEOUT_MS = 15_000;

const guardedAgents = {
  http: new RequestFilteringHttpAgent({ keepAlive: true }),
  https: new RequestFilteringHttpsAgent({ keepAlive: true }),
};
const openAgents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

export type ProviderAnswer = { status: number; body: unknown } | { status: 0; networkError: string };

export interface ProviderRequest {
  url: string;
  headers: Record<string, string>;
  body: unknown;
  allowPrivate: boolean;
  timeoutMs?: number;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Never rejects: a network failure is an answer with status 0 (its message names no secret). */
export function postJson(request: ProviderRequest): Promise<ProviderAnswer> {
  const timeoutMs = request.timeoutMs ?? PROVIDER_TIMEOUT_MS;
  const payload = Buffer.from(JSON.stringify(request.body), 'utf8');
  return new Promise((resolve) => {
    let deadline: NodeJS.Timeout | undefined;
    let settled = false;
    const finish = (answer: ProviderAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(answer);
    };
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      finish({ status: 0, networkError: 'URL do provedor inválida' });
      return;
    }
    const secure = url.protocol === 'https:';
    const agents = request.allowPrivate ? openAgents : guardedAgents;
    const req = (secure ? https : http).request(url, {
      method: 'POST',
      agent: secure ? agents.https : agents.http,
      headers: {
        ...request.headers,
        'content-type': 'application/json',
        'content-length': String(payload.length),
        'user-agent': 'Funil/1.0',
      },
    });
    deadline = setTimeout(() => req.destroy(new Error(`Tempo esgotado: o provedor não respondeu em ${timeoutMs / 1000} s`)), timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => {
      const blocked = /^DNS lookup .* is not allowed/.test(error.message);
      finish({
        status: 0,
        networkError: blocked
          ? 'Conexão bloqueada: o provedor resolve para um endereço privado'
          : `Falha de rede: ${error.code ?? error.message}`,
      });
    });
    req.on('response', (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= MAX_ANSWER_BYTES) chunks.push(chunk);
      });
      const done = () => finish({ status: response.statusCode ?? 0, body: parse(Buffer.concat(chunks).toString('utf8')) });
      response.on('end', done);
      response.on('error', done);
    });
    req.end(payload);
  });
}
