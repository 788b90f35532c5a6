// 10,000 inbound messages from 300 people, in every form WhatsApp and integrations write them: phones
// with and without the Brazilian ninth digit, with separators (the inbound route), BSUID only, phone
// and BSUID together; through signed Cloud webhook batches and the inbound route, several at a time.
// Afterwards: one lead per person with all its identities, one open conversation each, every message
// stored once.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { makeChannel } from './helpers.js';

const api = useTestApp();
const APP_SECRET = 'replay-app-secret';

/** A small deterministic generator: the same mix on every run. */
function random(seed: number) {
  return () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

interface Person {
  kind: 'phone' | 'bsuid' | 'both';
  eight: string;
  bsuid: string;
}

const full = (p: Person) => `55319${p.eight}`;
const short = (p: Person) => `5531${p.eight}`;
const separated = (digits: string) => `+${digits.slice(0, 2)} (${digits.slice(2, 4)}) ${digits.slice(4, -4)}-${digits.slice(-4)}`;

describe('replaying 10,000 inbound messages in mixed forms', () => {
  it('gives exactly one lead per person and one open conversation each, with every message stored once', async () => {
    const org = await api.newOrg();
    const channel = await makeChannel(api, org, {
      name: 'WhatsApp',
      provider: 'whatsapp_cloud',
      config: { phone_number_id: '5000', access_token: 'token', app_secret: APP_SECRET },
    });
    const kinds = ['phone', 'bsuid', 'both'] as const;
    const people: Person[] = Array.from({ length: 300 }, (_, i) => ({
      kind: kinds[i % 3],
      eight: String(86000000 + i),
      bsuid: `BR.${7300000000000 + i}`,
    }));
    const next = random(48);
    const TOTAL = 10_000;
    const BATCH = 100;
    const webhookBatches: Record<string, unknown>[][] = [];
    const routeBodies: Record<string, unknown>[] = [];
    let batch: Record<string, unknown>[] = [];
    for (let i = 0; i < TOTAL; i++) {
      const person = people[Math.floor(next() * people.length)];
      // Meta sends the BSUID on every message since 2026; a legacy person never has one, a username user never shows a phone.
      const phone =
        person.kind === 'bsuid' || (person.kind === 'both' && next() < 0.3) ? null : next() < 0.5 ? full(person) : short(person);
      const userId = person.kind === 'phone' ? null : person.bsuid;
      if (i % 50 === 0) {
        routeBodies.push({
          ...(phone ? { from: next() < 0.5 ? separated(phone) : `+${phone}` } : {}),
          ...(userId ? { user_id: userId } : {}),
          content: `m${i}`,
        });
        continue;
      }
      batch.push({
        contact: {
          profile: { name: `Pessoa ${person.eight}` },
          ...(phone ? { wa_id: phone } : {}),
          ...(userId ? { user_id: userId } : {}),
        },
        message: {
          ...(phone ? { from: phone } : {}),
          ...(userId ? { from_user_id: userId } : {}),
          id: `wamid.REPLAY${i}`,
          timestamp: '1767225600',
          type: 'text',
          text: { body: `m${i}` },
        },
      });
      if (batch.length === BATCH) {
        webhookBatches.push(batch);
        batch = [];
      }
    }
    if (batch.length) webhookBatches.push(batch);

    const postBatch = async (items: Record<string, unknown>[]) => {
      const body = JSON.stringify({
        object: 'whatsapp_business_account',
        entry: [
          {
            id: '1',
            changes: [
              {
                field: 'messages',
                value: {
                  messaging_product: 'whatsapp',
                  metadata: { phone_number_id: '5000' },
                  contacts: items.map((m) => m.contact),
                  messages: items.map((m) => m.message),
                },
              },
            ],
          },
        ],
      });
      const r = await api.raw(`/backend/channels/${channel.id}/whatsapp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-hub-signature-256': `sha256=${createHmac('sha256', APP_SECRET).update(body).digest('hex')}`,
        },
        body,
      });
      expect(r.status).toBe(200);
      expect((await r.json()).data.messages).toBe(items.length);
    };
    const postRoute = async (body: Record<string, unknown>) => {
      const r = await api.rest('POST', `/backend/channels/${channel.id}/inbound`, { key: org.key, body });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    };
    // Four writers at once, the route's messages spread among the batches.
    const work: (() => Promise<void>)[] = [
      ...webhookBatches.map((items) => () => postBatch(items)),
      ...routeBodies.map((body) => () => postRoute(body)),
    ].sort(() => next() - 0.5);
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let job = work.shift(); job; job = work.shift()) await job();
      }),
    );

    const leads = await api.db.sql.query<{ phone: string | null; whatsapp_user_id: string | null; conversations: number; active: number }>(
      `SELECT l.phone, l.whatsapp_user_id,
         (SELECT count(*)::int FROM conversations c WHERE c.tenant_id = l.tenant_id AND c.lead_id = l.id) AS conversations,
         (SELECT count(*)::int FROM conversations c WHERE c.tenant_id = l.tenant_id AND c.lead_id = l.id AND c.status = 'active') AS active
       FROM leads l WHERE l.tenant_id = $1`,
      [org.tenantId],
    );
    // Only the people who wrote (with 10,000 draws among 300, all of them).
    expect(leads).toHaveLength(people.length);
    const byIdentity = new Map(leads.map((l) => [l.whatsapp_user_id ?? l.phone, l]));
    for (const person of people) {
      const lead = byIdentity.get(person.kind === 'phone' ? `+${full(person)}` : person.bsuid);
      expect(lead, person.kind).toBeDefined();
      expect(lead).toMatchObject({
        phone: person.kind === 'bsuid' ? null : `+${full(person)}`,
        whatsapp_user_id: person.kind === 'phone' ? null : person.bsuid,
        conversations: 1,
        active: 1,
      });
    }
    const [counts] = await api.db.sql.query<{ messages: number; distinct_ids: number; unread: number }>(
      `SELECT count(*)::int AS messages, count(DISTINCT provider_message_id)::int AS distinct_ids,
         (SELECT sum(unread_count)::int FROM conversations WHERE tenant_id = $1) AS unread
       FROM messages WHERE tenant_id = $1`,
      [org.tenantId],
    );
    expect(counts).toEqual({ messages: TOTAL, distinct_ids: TOTAL - routeBodies.length, unread: TOTAL });
  }, 300_000);
});
