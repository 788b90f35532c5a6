// Secrets Funil must read back are sealed at rest (src/secrets.ts): webhook signing secrets and
// channels' provider credentials are stored as `enc:v1:…` under the configured key, never in clear;
// deliveries and the provider's webhook still work with them; values written before sealing are sealed
// by the reseal (the start, `cli reseal-secrets`), and a rotation (a new first SECRETS_KEY) reseals
// them all with it.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { resealSecrets } from '../../src/reseal-secrets.js';
import { configureSecrets, SecretBox, secrets } from '../../src/secrets.js';
import { makeChannel } from '../messaging/helpers.js';
import { makeWebhook, receiver, useWebhookApp, verifyStandard } from '../webhooks/helpers.js';

const api = useWebhookApp();

const stored = async (tenantId: string) => ({
  hooks: await api.db.prisma.$queryRaw<{ id: string; secret: string; previous_secret: string | null }[]>`
    SELECT id, secret, previous_secret FROM webhooks WHERE tenant_id = ${tenantId}::uuid`,
  channels: await api.db.prisma.$queryRaw<{ id: string; config: Record<string, string> }[]>`
    SELECT id, config FROM channels WHERE tenant_id = ${tenantId}::uuid`,
});

const CREDENTIALS = { access_token: 'EAAG-token-1234567890', app_secret: 'app-secret-0987654321', verify_token: 'verify-me-please' };

async function organisation() {
  const org = await api.newOrg();
  const hit = await receiver();
  const hook = await makeWebhook(api, org, { url: hit.url, events: ['lead.created'] });
  const regenerated = await api.rest('POST', `/backend/webhooks/${hook.id}/regenerate-secret`, { key: org.key });
  const channel = await makeChannel(api, org, {
    name: 'WhatsApp',
    provider: 'whatsapp_cloud',
    config: { api_url: 'http://127.0.0.1:9/graph', phone_number_id: '106540352242922', ...CREDENTIALS },
  });
  return { org, hit, hook, secret: regenerated.body.data.secret as string, previous: hook.secret, channel };
}

/** The channel's verification challenge: answered only when the stored verify token opens to the one sent. */
const challenge = (channelId: string, token: string) =>
  api.raw(`/backend/channels/${channelId}/whatsapp?hub.mode=subscribe&hub.verify_token=${token}&hub.challenge=42`);

describe('secrets at rest', () => {
  it('stores webhook secrets and channel credentials sealed, and still signs and verifies with them', async () => {
    const { org, hit, hook, secret, previous, channel } = await organisation();
    const rows = await stored(org.tenantId);
    expect(rows.hooks[0].secret).toMatch(/^enc:v1:[0-9a-f]{8}:/);
    expect(rows.hooks[0].previous_secret).toMatch(/^enc:v1:/);
    const text = JSON.stringify(rows);
    for (const plain of [secret, previous, ...Object.values(CREDENTIALS)]) expect(text).not.toContain(plain);
    expect(rows.channels[0].config).toMatchObject({ phone_number_id: '106540352242922', api_url: 'http://127.0.0.1:9/graph' });

    const test = await api.rest('POST', `/backend/webhooks/${hook.id}/test`, { key: org.key });
    expect(test.status).toBe(200);
    expect(hit.hits).toHaveLength(1);
    expect(verifyStandard(secret, hit.hits[0]).type).toBe('webhook.test');
    expect(verifyStandard(previous, hit.hits[0]).type).toBe('webhook.test');
    const answered = await challenge(channel.id, CREDENTIALS.verify_token);
    expect([answered.status, await answered.text()]).toEqual([200, '42']);
    expect((await challenge(channel.id, 'wrong')).status).toBe(403);
  });

  it('seals values written in clear, and reseals everything with a new first key', async () => {
    const { org, hit, hook, secret, channel } = await organisation();
    // As a database from before sealing has them.
    const box = secrets();
    await api.db.prisma.$executeRaw`UPDATE webhooks SET secret = ${secret}, previous_secret = NULL WHERE tenant_id = ${org.tenantId}::uuid`;
    const clear = { ...(await stored(org.tenantId)).channels[0].config, ...CREDENTIALS };
    await api.db.prisma.$executeRaw`UPDATE channels SET config = ${JSON.stringify(clear)}::jsonb WHERE tenant_id = ${org.tenantId}::uuid`;
    expect((await challenge(channel.id, CREDENTIALS.verify_token)).status).toBe(200);

    const first = await resealSecrets(api.db.prisma);
    expect(first.webhooks).toBeGreaterThanOrEqual(1);
    expect(first.channels).toBeGreaterThanOrEqual(1);
    let rows = await stored(org.tenantId);
    expect(rows.hooks[0].secret.startsWith(`enc:v1:${box.currentKeyId}:`)).toBe(true);
    expect(rows.channels[0].config.access_token.startsWith(`enc:v1:${box.currentKeyId}:`)).toBe(true);
    expect(await resealSecrets(api.db.prisma)).toEqual({ webhooks: 0, channels: 0 });

    // A rotation: the new key first, the old one still listed to open what it sealed.
    const rotated = configureSecrets(
      loadConfig({ NODE_ENV: 'test', SECRETS_KEY: `a-brand-new-secrets-key-0123456789abcdef,${api.config.secretsKeys![0]}` }),
    );
    try {
      expect(rotated.currentKeyId).not.toBe(box.currentKeyId);
      await resealSecrets(api.db.prisma);
      rows = await stored(org.tenantId);
      expect(rows.hooks[0].secret.startsWith(`enc:v1:${rotated.currentKeyId}:`)).toBe(true);
      for (const key of Object.keys(CREDENTIALS))
        expect(rows.channels[0].config[key].startsWith(`enc:v1:${rotated.currentKeyId}:`)).toBe(true);
      expect(new SecretBox(['a-brand-new-secrets-key-0123456789abcdef']).open(rows.hooks[0].secret)).toBe(secret);
      await api.rest('POST', `/backend/webhooks/${hook.id}/test`, { key: org.key });
      expect(verifyStandard(secret, hit.hits.at(-1)!).type).toBe('webhook.test');
      expect((await challenge(channel.id, CREDENTIALS.verify_token)).status).toBe(200);
    } finally {
      configureSecrets(api.config);
    }
  });

  it('a box opens only what one of its keys sealed, and tells a tampered value', () => {
    const a = new SecretBox(['key-a-0123456789abcdef0123456789abcdef']);
    const b = new SecretBox(['key-b-0123456789abcdef0123456789abcdef']);
    const sealed = a.seal('whsec_c2VjcmV0');
    expect(sealed).not.toContain('c2VjcmV0');
    expect(a.seal('whsec_c2VjcmV0')).not.toBe(sealed);
    expect(a.open(sealed)).toBe('whsec_c2VjcmV0');
    expect(() => b.open(sealed)).toThrow(/SECRETS_KEY does not hold/);
    expect(new SecretBox(['key-b-0123456789abcdef0123456789abcdef', 'key-a-0123456789abcdef0123456789abcdef']).open(sealed)).toBe(
      'whsec_c2VjcmV0',
    );
    const tampered = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA');
    expect(() => a.open(tampered)).toThrow();
    expect(a.open('plain-before-sealing')).toBe('plain-before-sealing');
  });

  it('refuses to start in production on PostgreSQL without SECRETS_KEY, and a short key anywhere', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://db/funil' })).toThrow(/SECRETS_KEY is required/);
    expect(() => loadConfig({ NODE_ENV: 'development', SECRETS_KEY: 'short' })).toThrow(/at least 32/);
  });
});
