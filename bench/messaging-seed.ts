// Messaging benchmark data, in the real schema with INSERT … SELECT generate_series: one organisation
// with an Owner key and a `test` channel, `conversations` leads with one open conversation each, and
// `messages` messages in all. `longConversations` of them hold half the messages between them (very
// long histories) and are the most recently active, so they sit on the first page of the list; the
// others share the rest. Each conversation's last message and unread count are set as the app keeps
// them (columns of the conversation, written with each message).
import pg from 'pg';
import { generateApiKey, hashApiKey } from '../src/auth/keys.js';

export interface MessagingSeed {
  tenantId: string;
  key: string;
  channelId: string;
}

export interface MessagingSeedOptions {
  conversations: number;
  messages: number;
  longConversations: number;
  log: (s: string) => void;
}

/** An organisation with an Owner, its API key (last use recorded ahead, so requests never write it) and a `test` channel. */
export async function seedOrganisation(pool: pg.Pool, name: string): Promise<MessagingSeed> {
  const key = generateApiKey();
  const q = (sql: string, params: unknown[] = []) => pool.query(sql, params);
  const {
    rows: [tenant],
  } = await q(`INSERT INTO tenants (name) VALUES ($1) RETURNING id`, [name]);
  const t = tenant.id as string;
  const {
    rows: [user],
  } = await q(`INSERT INTO users (tenant_id, name, email, role) VALUES ($1, 'Owner', 'owner@bench.test', 'owner') RETURNING id`, [t]);
  await q(
    `INSERT INTO api_keys (tenant_id, user_id, name, prefix, key_hash, permissions, last_used_at) VALUES ($1, $2, 'bench', $3, $4, '{}', now() + interval '1 day')`,
    [t, user.id, key.slice(0, 10), hashApiKey(key)],
  );
  const {
    rows: [channel],
  } = await q(`INSERT INTO channels (tenant_id, name, provider) VALUES ($1, 'WhatsApp', 'test') RETURNING id`, [t]);
  return { tenantId: t, key, channelId: channel.id };
}

export async function seedConversations(pool: pg.Pool, opts: MessagingSeedOptions): Promise<MessagingSeed> {
  const seeded = await seedOrganisation(pool, 'Bench mensagens');
  const q = (sql: string, params: unknown[] = []) => pool.query(sql, params);
  const t = seeded.tenantId;
  const long = Math.min(opts.longConversations, opts.conversations);
  const longEach = long ? Math.floor(opts.messages / 2 / long) : 0;
  const shortEach = Math.max(1, Math.floor((opts.messages - long * longEach) / Math.max(1, opts.conversations - long)));

  opts.log(`seed: ${opts.conversations} leads and conversations`);
  await q(
    `INSERT INTO leads (tenant_id, name, phone, created_at)
     SELECT $1, 'Contato ' || i, '+55119' || lpad(i::text, 8, '0'), now() - interval '60 days'
     FROM generate_series(1, $2::int) AS i`,
    [t, opts.conversations],
  );
  await q(
    `INSERT INTO conversations (tenant_id, lead_id, channel_id, status, created_at)
     SELECT l.tenant_id, l.id, $2, CASE WHEN n % 10 = 0 THEN 'archived' ELSE 'active' END::"ConversationStatus", l.created_at
     FROM (SELECT l.*, row_number() OVER (ORDER BY phone) AS n FROM leads l WHERE tenant_id = $1) l`,
    [t, seeded.channelId],
  );
  // Conversation k (1 = most recent) ends k minutes ago; its messages are one second apart before that.
  opts.log(`seed: ${opts.messages} messages (${long} conversations with ${longEach} each, the others ${shortEach})`);
  await q(
    `WITH c AS (
       SELECT id, lead_id, channel_id, k, CASE WHEN k <= $2::int THEN $3::int ELSE $4::int END AS n
       FROM (SELECT id, lead_id, channel_id, row_number() OVER (ORDER BY lead_id) AS k FROM conversations WHERE tenant_id = $1) x)
     INSERT INTO messages (tenant_id, conversation_id, lead_id, channel_id, role, content, status, created_at, updated_at)
     SELECT $1, c.id, c.lead_id, c.channel_id,
            CASE WHEN g % 3 = 0 THEN 'assistant' ELSE 'user' END::"MessageRole",
            CASE WHEN g % 3 = 0 THEN 'Resposta ' || g || ': obrigado pelo contato, já verificamos o seu pedido.' ELSE 'Mensagem ' || g || ': olá, gostaria de saber o prazo de entrega.' END,
            CASE WHEN g % 3 = 0 THEN 'read' ELSE 'received' END::"MessageStatus",
            now() - c.k * interval '1 minute' - (c.n - g) * interval '1 second',
            now() - c.k * interval '1 minute' - (c.n - g) * interval '1 second'
     FROM c CROSS JOIN LATERAL generate_series(1, c.n) AS g`,
    [t, long, longEach, shortEach],
  );
  opts.log('seed: last message and unread count of each conversation');
  await q(
    `UPDATE conversations c SET last_message_content = m.content, last_message_role = m.role, last_message_at = m.created_at,
            updated_at = m.created_at, unread_count = CASE WHEN m.role = 'user' THEN 1 + m.n % 5 ELSE 0 END
     FROM (SELECT DISTINCT ON (conversation_id) conversation_id, content, role, created_at, (hashtext(conversation_id::text) & 255) AS n
           FROM messages WHERE tenant_id = $1 ORDER BY conversation_id, created_at DESC, id DESC) m
     WHERE c.tenant_id = $1 AND c.id = m.conversation_id`,
    [t],
  );
  opts.log('seed: VACUUM ANALYZE');
  for (const table of ['leads', 'conversations', 'messages']) await q(`VACUUM ANALYZE ${table}`);
  return seeded;
}
