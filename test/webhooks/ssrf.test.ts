// With WEBHOOK_ALLOW_PRIVATE_URLS=false (the default): registration refuses URLs that are or resolve to
// private, loopback, link-local or reserved addresses (400 through the API), and a delivery to such an
// address is refused when connecting (a hook whose host later resolves inward: here its stored URL).
import { lookup } from 'node:dns/promises';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { isPublicAddress } from '../../src/domains/webhooks/url-guard.js';
import { nextPhone } from '../helpers/factories.js';
import { deliveries, makeWebhook, receiver, sleep, useWebhookApp, waitFor } from './helpers.js';

const api = useWebhookApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'false' });

/** The machine's own name when it resolves to a non-public address (as in most containers), else null. */
async function nameResolvingInward(): Promise<string | null> {
  const name = os.hostname();
  try {
    const addresses = await lookup(name, { all: true });
    return addresses.some((a) => !isPublicAddress(a.address)) ? name : null;
  } catch {
    return null;
  }
}

describe('SSRF guard', () => {
  it('refuses private, loopback, link-local and reserved targets at registration with 400', async () => {
    const org = await api.newOrg();
    const urls = [
      'https://127.0.0.1/hook',
      'https://localhost/hook',
      'https://[::1]/hook',
      'https://0.0.0.0/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://10.0.0.1/hook',
      'https://2130706433/hook', // 127.0.0.1 as a decimal number
      'https://0x7f000001/hook',
      'https://[::ffff:127.0.0.1]/hook',
      'https://192.168.1.10/hook',
      'https://100.64.0.1/hook',
      'http://93.184.216.34/hook', // public, but plain http
    ];
    const inward = await nameResolvingInward();
    if (inward) urls.push(`https://${inward}/hook`);
    for (const url of urls) {
      const r = await api.rest('POST', '/backend/webhooks', { key: org.key, body: { url, events: ['lead.created'] } });
      expect(r.status, url).toBe(400);
      expect(r.body.error.code, url).toBe('VALIDATION_ERROR');
    }
    const hook = await makeWebhook(api, org, { url: 'https://93.184.216.34/hook', events: ['lead.created'] });
    const moved = await api.rest('PUT', `/backend/webhooks/${hook.id}`, { key: org.key, body: { url: 'https://169.254.169.254/' } });
    expect(moved.status).toBe(400);
    expect((await api.rest('GET', '/backend/webhooks', { key: org.key })).body.data.map((h: any) => h.url)).toEqual([
      'https://93.184.216.34/hook',
    ]);
  });

  it('refuses to connect to a private address at delivery time', async () => {
    const org = await api.newOrg();
    const target = await receiver();
    const hook = await makeWebhook(api, org, { url: 'https://93.184.216.34/hook', events: ['lead.created'] });
    // As if its host now resolved to loopback: the stored URL points there.
    await api.db.sql.query('UPDATE webhooks SET url = $1 WHERE id = $2', [target.url, hook.id]);
    await api.rest('POST', '/backend/leads', { key: org.key, body: { name: 'Ana', phone: nextPhone() } });
    const [first] = await waitFor(async () => {
      const log = await deliveries(api, org, hook.id);
      expect(log.length).toBeGreaterThan(0);
      return log.reverse();
    });
    expect(first).toMatchObject({
      attempt: 1,
      status: 'retrying',
      response_status: null,
      error: expect.stringMatching(/^Conexão bloqueada/),
    });
    await sleep(500);
    expect(target.hits).toEqual([]);
  });
});
