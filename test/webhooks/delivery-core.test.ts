// Webhook delivery primitives without a database: Standard Webhooks signatures checked by the reference
// library and by a plain HMAC, what one attempt reports for each kind of answer from a real receiver on
// loopback, the SSRF guard at registration and at connect time, and the retry schedule.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { AppError } from '../../src/errors.js';
import { ConfigError } from '../../src/config.js';
import { generateSecret, sign, signatureHeader } from '../../src/domains/webhooks/signing.js';
import { attemptDelivery, parseRetryAfter, type DeliveryRequest } from '../../src/domains/webhooks/deliver.js';
import { validateWebhookUrl, type Resolver } from '../../src/domains/webhooks/url-guard.js';
import { DEFAULT_RETRY_SCHEDULE, nextAttemptDelay, parseRetrySchedule } from '../../src/domains/webhooks/schedule.js';
import { plainSignature } from './signature.js';

interface Hit {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}
type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

const servers: http.Server[] = [];
const pendingTimers: NodeJS.Timeout[] = [];

afterEach(async () => {
  pendingTimers.splice(0).forEach(clearTimeout);
  await Promise.all(
    servers.splice(0).map((server) => {
      server.closeAllConnections();
      return new Promise((done) => server.close(done));
    }),
  );
});

/** A real HTTP receiver on 127.0.0.1 that records every request it gets. */
async function receiver(handler: Handler = (_req, res) => res.writeHead(204).end()) {
  const hits: Hit[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      hits.push({ method: req.method!, path: req.url!, headers: req.headers, body: Buffer.concat(chunks) });
      handler(req, res);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  servers.push(server);
  const port = (server.address() as AddressInfo).port;
  return { port, url: `http://127.0.0.1:${port}/hook`, hits };
}

const now = () => Math.floor(Date.now() / 1000);

function delivery(url: string, overrides: Partial<DeliveryRequest> = {}): DeliveryRequest {
  return {
    url,
    msgId: 'msg_2mZ8dWq1',
    timestamp: now(),
    body: JSON.stringify({ type: 'lead.created', timestamp: new Date().toISOString(), data: { id: 'x', name: 'João Ação' } }),
    secrets: [generateSecret()],
    allowPrivate: true,
    timeoutMs: 2000,
    ...overrides,
  };
}

function verifyWith(secret: string, hit: Hit): unknown {
  return new Webhook(secret).verify(hit.body, {
    'webhook-id': String(hit.headers['webhook-id']),
    'webhook-timestamp': String(hit.headers['webhook-timestamp']),
    'webhook-signature': String(hit.headers['webhook-signature']),
  });
}

describe('signing', () => {
  it('generates whsec_ secrets of 32 random bytes, different every time', () => {
    const a = generateSecret();
    const b = generateSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(a).not.toBe(b);
  });

  it('matches the Standard Webhooks test vector and the reference library', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const [id, ts, payload] = ['msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}'];
    expect(sign(secret, id, ts, payload)).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    expect(sign(secret, id, ts, Buffer.from(payload))).toBe(new Webhook(secret).sign(id, new Date(ts * 1000), payload));
  });

  it('puts one signature per secret in the header, in order', () => {
    const [a, b] = [generateSecret(), generateSecret()];
    const header = signatureHeader([a, b], 'msg_1', 1700000000, '{}');
    expect(header.split(' ')).toEqual([sign(a, 'msg_1', 1700000000, '{}'), sign(b, 'msg_1', 1700000000, '{}')]);
  });

  it('refuses a secret without the whsec_ prefix, a fractional timestamp and an empty secret list', () => {
    expect(() => sign('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'm', 1, '{}')).toThrow(/whsec_/);
    expect(() => sign(generateSecret(), 'm', 1.5, '{}')).toThrow(/seconds/);
    expect(() => signatureHeader([], 'm', 1, '{}')).toThrow(/secret/);
  });
});

describe('attemptDelivery', () => {
  it('POSTs the exact signed bytes: the reference library and a plain HMAC both verify them', async () => {
    const hook = await receiver();
    const request = delivery(hook.url);
    const result = await attemptDelivery(request);
    expect(result).toMatchObject({ ok: true, status: 204 });
    expect(result.error).toBeUndefined();
    expect(result.durationMs).toBeGreaterThanOrEqual(0);

    expect(hook.hits).toHaveLength(1);
    const [hit] = hook.hits;
    expect(hit.method).toBe('POST');
    expect(hit.path).toBe('/hook');
    expect(hit.headers['content-type']).toBe('application/json');
    expect(hit.headers['webhook-id']).toBe(request.msgId);
    expect(hit.headers['webhook-timestamp']).toBe(String(request.timestamp));
    expect(hit.body.equals(Buffer.from(request.body as string, 'utf8'))).toBe(true);
    expect(verifyWith(request.secrets[0], hit)).toEqual(JSON.parse(request.body as string));
    expect(hit.headers['webhook-signature']).toBe(plainSignature(request.secrets[0], hit));
    // A different secret does not verify: the check above can fail.
    expect(() => verifyWith(generateSecret(), hit)).toThrow();
  });

  it('signs a Buffer body over its bytes as sent', async () => {
    const hook = await receiver();
    const body = Buffer.from('{"data":{"name":"Conceição"}}', 'utf8');
    const request = delivery(hook.url, { body });
    expect((await attemptDelivery(request)).ok).toBe(true);
    expect(hook.hits[0].body.equals(body)).toBe(true);
    expect(hook.hits[0].headers['webhook-signature']).toBe(plainSignature(request.secrets[0], hook.hits[0]));
  });

  it('sends two signatures during a grace window, each valid for its own secret', async () => {
    const hook = await receiver();
    const [current, previous] = [generateSecret(), generateSecret()];
    expect((await attemptDelivery(delivery(hook.url, { secrets: [current, previous] }))).ok).toBe(true);
    const hit = hook.hits[0];
    const signatures = String(hit.headers['webhook-signature']).split(' ');
    expect(signatures).toHaveLength(2);
    expect(signatures[0]).toBe(plainSignature(current, hit));
    expect(signatures[1]).toBe(plainSignature(previous, hit));
    // A receiver still on the old secret and one already on the new one both accept the delivery.
    expect(verifyWith(current, hit)).toBeTruthy();
    expect(verifyWith(previous, hit)).toBeTruthy();
  });

  it('does not follow a redirect: 3xx is a failure and the target is never requested', async () => {
    const hook = await receiver((req, res) => {
      if (req.url === '/hook') res.writeHead(302, { location: '/elsewhere' }).end();
      else res.writeHead(200).end();
    });
    const result = await attemptDelivery(delivery(hook.url));
    expect(result).toMatchObject({ ok: false, status: 302 });
    expect(result.error).toMatch(/Redirecionamento não seguido/);
    expect(hook.hits.map((hit) => hit.path)).toEqual(['/hook']);
  });

  it('counts only 2xx as success', async () => {
    for (const status of [200, 201, 202, 299]) {
      const hook = await receiver((_req, res) => res.writeHead(status).end('ok'));
      expect(await attemptDelivery(delivery(hook.url))).toMatchObject({ ok: true, status });
    }
    for (const status of [304, 400, 404, 500]) {
      const hook = await receiver((_req, res) => res.writeHead(status).end());
      const result = await attemptDelivery(delivery(hook.url));
      expect(result).toMatchObject({ ok: false, status });
      expect(result.disable).toBeUndefined();
      expect(result.error).toMatch(String(status));
    }
  });

  it('asks for the webhook to be disabled on 410', async () => {
    const hook = await receiver((_req, res) => res.writeHead(410).end());
    expect(await attemptDelivery(delivery(hook.url))).toMatchObject({ ok: false, status: 410, disable: true });
  });

  it('reads Retry-After on 429 (seconds) and 503 (HTTP date), and ignores it on other statuses', async () => {
    const limited = await receiver((_req, res) => res.writeHead(429, { 'retry-after': '7' }).end());
    expect(await attemptDelivery(delivery(limited.url))).toMatchObject({ ok: false, status: 429, retryAfterMs: 7000 });

    const when = new Date(Date.now() + 120_000).toUTCString();
    const unavailable = await receiver((_req, res) => res.writeHead(503, { 'retry-after': when }).end());
    const result = await attemptDelivery(delivery(unavailable.url));
    expect(result).toMatchObject({ ok: false, status: 503 });
    expect(result.retryAfterMs).toBeGreaterThan(115_000);
    expect(result.retryAfterMs).toBeLessThanOrEqual(120_000);

    const failing = await receiver((_req, res) => res.writeHead(500, { 'retry-after': '7' }).end());
    expect((await attemptDelivery(delivery(failing.url))).retryAfterMs).toBeUndefined();
  });

  it('parses Retry-After values', () => {
    const at = Date.parse('Sun, 06 Nov 1994 08:49:37 GMT');
    expect(parseRetryAfter('7')).toBe(7000);
    expect(parseRetryAfter(' 0 ')).toBe(0);
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:47 GMT', at)).toBe(10_000);
    expect(parseRetryAfter('Sunday, 06-Nov-94 08:49:57 GMT', at)).toBe(20_000);
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:27 GMT', at)).toBe(0);
    for (const bad of [undefined, '', '-5', '1.5', 'soon']) expect(parseRetryAfter(bad, at)).toBeUndefined();
  });

  it('stops reading a response body after a few KB and does not wait for the rest', async () => {
    let closed = false;
    const hook = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      // An endless body: only the client hanging up stops it.
      const chunk = Buffer.alloc(16 * 1024, 'x');
      const pump = () => {
        while (!closed && res.write(chunk));
        if (!closed) res.once('drain', pump);
      };
      res.on('close', () => (closed = true));
      pump();
    });
    const result = await attemptDelivery(delivery(hook.url, { timeoutMs: 10_000 }));
    expect(result).toMatchObject({ ok: true, status: 200 });
    expect(result.durationMs).toBeLessThan(5000);
    await expect.poll(() => closed).toBe(true);
  });

  it('fails with a timeout when the receiver is slower than timeoutMs', async () => {
    const hook = await receiver((_req, res) => pendingTimers.push(setTimeout(() => res.writeHead(200).end(), 5000)));
    const result = await attemptDelivery(delivery(hook.url, { timeoutMs: 300 }));
    expect(result.ok).toBe(false);
    expect(result.status).toBeUndefined();
    expect(result.error).toBe('Tempo esgotado: o receptor não respondeu em 0.3 s');
    expect(result.durationMs).toBeGreaterThanOrEqual(295);
    expect(result.durationMs).toBeLessThan(2000);
  });

  it('gives up after 15 s by default on a receiver that answers after 16 s', { timeout: 30_000 }, async () => {
    const hook = await receiver((_req, res) => pendingTimers.push(setTimeout(() => res.writeHead(200).end(), 16_000)));
    const result = await attemptDelivery(delivery(hook.url, { timeoutMs: undefined }));
    expect(result.ok).toBe(false);
    expect(result.error).toBe('Tempo esgotado: o receptor não respondeu em 15 s');
    expect(result.durationMs).toBeGreaterThanOrEqual(14_990);
    expect(result.durationMs).toBeLessThan(16_000);
    expect(hook.hits).toHaveLength(1);
  });

  it('reports a refused connection and a bad URL without throwing', async () => {
    const hook = await receiver();
    const closedUrl = hook.url;
    await new Promise((done) => {
      const server = servers.pop()!;
      server.close(done);
    });
    const refused = await attemptDelivery(delivery(closedUrl));
    expect(refused).toMatchObject({ ok: false, error: 'Conexão recusada pelo receptor (ECONNREFUSED)' });
    expect(await attemptDelivery(delivery('not a url'))).toMatchObject({ ok: false, error: 'URL inválida' });
    expect(await attemptDelivery(delivery('ftp://127.0.0.1/x'))).toMatchObject({ ok: false, error: 'Esquema não suportado: ftp:' });
  });

  describe('connect-time SSRF guard', () => {
    it('refuses a host that resolves to loopback unless private URLs are allowed', async () => {
      const hook = await receiver();
      const url = `http://localhost:${hook.port}/hook`;
      const blocked = await attemptDelivery(delivery(url, { allowPrivate: false }));
      expect(blocked).toMatchObject({ ok: false, error: 'Conexão bloqueada: o host resolve para um endereço privado, local ou reservado' });
      expect(blocked.status).toBeUndefined();
      expect(hook.hits).toHaveLength(0);

      expect(await attemptDelivery(delivery(url, { allowPrivate: true }))).toMatchObject({ ok: true, status: 204 });
      expect(hook.hits).toHaveLength(1);
    });

    it('refuses literal private addresses over http and https before connecting', async () => {
      const hook = await receiver();
      for (const url of [
        hook.url,
        `https://127.0.0.1:${hook.port}/hook`,
        `https://localhost:${hook.port}/hook`,
        `http://[::ffff:127.0.0.1]:${hook.port}/hook`,
      ]) {
        const result = await attemptDelivery(delivery(url, { allowPrivate: false }));
        expect(result, url).toMatchObject({ ok: false, error: expect.stringMatching(/^Conexão bloqueada/) });
      }
      expect(hook.hits).toHaveLength(0);
    });
  });
});

describe('validateWebhookUrl', () => {
  /** Records every name looked up, so literal addresses can be shown never to reach a resolver. */
  function recordingResolver(answer: string[] | Error) {
    const asked: string[] = [];
    const resolve: Resolver = async (hostname) => {
      asked.push(hostname);
      if (answer instanceof Error) throw answer;
      return answer;
    };
    return { asked, resolve };
  }

  async function refusal(url: string, resolve?: Resolver, allowPrivate = false): Promise<AppError> {
    const error = await validateWebhookUrl(url, { allowPrivate, resolve }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error, url).toBeInstanceOf(AppError);
    expect((error as AppError).kind).toBe('INVALID_INPUT');
    expect((error as AppError).status).toBe(400);
    return error as AppError;
  }

  it('refuses private, loopback, link-local, CGNAT, unspecified, reserved and mapped addresses in every spelling', async () => {
    const { asked, resolve } = recordingResolver(['93.184.215.14']);
    const vectors = [
      'https://127.0.0.1',
      'https://localhost',
      'https://LocalHost./x',
      'https://api.localhost/x',
      'https://[::1]',
      'https://0.0.0.0',
      'https://0/',
      'https://[::]/',
      'https://169.254.169.254/latest/meta-data/',
      'https://[fd00:ec2::254]/',
      'https://10.0.0.1',
      'https://172.16.5.4',
      'https://192.168.0.10:8443/hook',
      'https://100.64.0.1',
      'https://100.100.100.200',
      'https://2130706433',
      'https://0x7f.1',
      'https://0177.0.0.1',
      'https://127.1',
      'https://%31%32%37.0.0.1/',
      'https://[::ffff:127.0.0.1]',
      'https://[::ffff:a00:1]',
      'https://[::127.0.0.1]',
      'https://[fe80::1]',
      'https://[fc00::1]',
      'https://224.0.0.1',
      'https://255.255.255.255',
      'https://192.0.2.1',
      'https://[64:ff9b::7f00:1]',
      'https://[2002:7f00:1::]',
    ];
    for (const url of vectors) {
      const error = await refusal(url, resolve);
      expect(error.message, url).toBe('O campo url aponta para um endereço privado, local ou reservado; use um endereço público');
    }
    // Decided from the URL alone: nothing was looked up.
    expect(asked).toEqual([]);
  });

  it('refuses other schemes, plain http and userinfo', async () => {
    const { asked, resolve } = recordingResolver(['93.184.215.14']);
    expect((await refusal('ftp://files.example.com/hook', resolve)).message).toBe('O campo url deve usar https');
    expect((await refusal('http://hooks.example.com/x', resolve)).message).toBe('O campo url deve usar https');
    expect((await refusal('https://user:secret@hooks.example.com/x', resolve)).message).toBe(
      'O campo url não pode conter usuário ou senha',
    );
    expect((await refusal('https://user@hooks.example.com/x', resolve)).message).toBe('O campo url não pode conter usuário ou senha');
    expect((await refusal('not a url', resolve)).message).toMatch(/URL válida/);
    expect((await refusal('   ', resolve)).message).toBe('O campo url é obrigatório');
    expect((await refusal(`https://hooks.example.com/${'a'.repeat(2048)}`, resolve)).message).toMatch(/2048/);
    expect(asked).toEqual([]);
  });

  it('refuses a name when any of its addresses is not public', async () => {
    for (const answer of [['93.184.215.14', '127.0.0.1'], ['10.1.2.3'], ['::ffff:10.0.0.1'], ['2606:2800:21f:cb07::1', 'fe80::1']]) {
      const { asked, resolve } = recordingResolver(answer);
      await refusal('https://internal.example.com/hook', resolve);
      expect(asked).toEqual(['internal.example.com']);
    }
  });

  it('accepts public addresses and names, normalised', async () => {
    const { resolve } = recordingResolver(['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']);
    expect(await validateWebhookUrl('  https://Hooks.Example.com/in?x=1 ', { allowPrivate: false, resolve })).toBe(
      'https://hooks.example.com/in?x=1',
    );
    expect(await validateWebhookUrl('https://93.184.215.14:8443/hook', { allowPrivate: false, resolve })).toBe(
      'https://93.184.215.14:8443/hook',
    );
    expect(await validateWebhookUrl('https://[2606:4700::1111]/hook', { allowPrivate: false, resolve })).toBe(
      'https://[2606:4700::1111]/hook',
    );
  });

  it('accepts a name that does not resolve now: the connect-time guard still decides', async () => {
    const notFound = Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    const { asked, resolve } = recordingResolver(notFound);
    expect(await validateWebhookUrl('https://not-yet.example.com/hook', { allowPrivate: false, resolve })).toBe(
      'https://not-yet.example.com/hook',
    );
    expect(asked).toEqual(['not-yet.example.com']);
  });

  it('with private URLs allowed, accepts http and local hosts but still refuses userinfo and other schemes', async () => {
    const { asked, resolve } = recordingResolver(['127.0.0.1']);
    expect(await validateWebhookUrl('http://2130706433:8080/hook', { allowPrivate: true, resolve })).toBe('http://127.0.0.1:8080/hook');
    expect(await validateWebhookUrl('http://localhost:3000/x', { allowPrivate: true, resolve })).toBe('http://localhost:3000/x');
    expect(await validateWebhookUrl('https://[::1]/x', { allowPrivate: true, resolve })).toBe('https://[::1]/x');
    expect((await refusal('http://u:p@localhost/x', resolve, true)).message).toBe('O campo url não pode conter usuário ou senha');
    expect((await refusal('ftp://localhost/x', resolve, true)).message).toBe('O campo url deve usar http ou https');
    expect(asked).toEqual([]);
  });
});

describe('retry schedule', () => {
  it('defaults to the Standard Webhooks example schedule', () => {
    const [s, m, h] = [1000, 60_000, 3_600_000];
    expect(DEFAULT_RETRY_SCHEDULE).toEqual([0, 5 * s, 5 * m, 30 * m, 2 * h, 5 * h, 10 * h, 14 * h, 20 * h, 24 * h]);
    expect(parseRetrySchedule({})).toEqual(DEFAULT_RETRY_SCHEDULE);
  });

  it('takes WEBHOOK_RETRY_SCHEDULE in milliseconds and refuses a bad one', () => {
    expect(parseRetrySchedule({ WEBHOOK_RETRY_SCHEDULE: '0, 50,200' })).toEqual([0, 50, 200]);
    expect(() => parseRetrySchedule({ WEBHOOK_RETRY_SCHEDULE: '0,soon' })).toThrow(ConfigError);
    expect(() => parseRetrySchedule({ WEBHOOK_RETRY_SCHEDULE: '0,-5' })).toThrow(ConfigError);
  });

  it('gives the wait before the next attempt, and null once the schedule is exhausted', () => {
    expect(nextAttemptDelay(0, DEFAULT_RETRY_SCHEDULE)).toBe(0);
    expect(nextAttemptDelay(1, DEFAULT_RETRY_SCHEDULE)).toBe(5000);
    expect(nextAttemptDelay(2, DEFAULT_RETRY_SCHEDULE)).toBe(300_000);
    expect(nextAttemptDelay(9, DEFAULT_RETRY_SCHEDULE)).toBe(86_400_000);
    expect(nextAttemptDelay(10, DEFAULT_RETRY_SCHEDULE)).toBeNull();
    expect(nextAttemptDelay(3, [0, 50, 200])).toBeNull();
    expect(() => nextAttemptDelay(-1, DEFAULT_RETRY_SCHEDULE)).toThrow();
  });

  it('lets Retry-After push the next attempt later, never sooner, and at most 24 h', () => {
    expect(nextAttemptDelay(1, DEFAULT_RETRY_SCHEDULE, 7000)).toBe(7000);
    expect(nextAttemptDelay(2, DEFAULT_RETRY_SCHEDULE, 7000)).toBe(300_000);
    expect(nextAttemptDelay(1, DEFAULT_RETRY_SCHEDULE, 48 * 3_600_000)).toBe(24 * 3_600_000);
    expect(nextAttemptDelay(10, DEFAULT_RETRY_SCHEDULE, 7000)).toBeNull();
  });
});
