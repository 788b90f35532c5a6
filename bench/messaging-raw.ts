// (c) The messaging baselines: a hand-written HTTP handler with `pg` and SQL, authenticating the key like
// the app (bench/raw-server.ts), answering
//   GET  /conversations?limit&offset  the same JSON as GET /backend/conversations (PostgreSQL builds it);
//   POST /channels/{id}/inbound       the same inserts and updates as the app, in one transaction: the
//        lead by phone (created if new, with `lead.created`), the open conversation (created if none,
//        with `conversation.created`), the message, the conversation's unread count and last message,
//        `message.received`; each event with its dispatch job and NOTIFY; then the same JSON answer.
//   POST /channels/{id}/whatsapp     a signed Cloud webhook batch (the secret given at start, no key): each
//        message as the inbound route (its wamid stored once), each status one forward-only UPDATE.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { countingPool, send, tenantOfKey, ts, UNAUTHORIZED } from './raw-server.js';

export interface RawMessagingServer {
  url: string;
  statements: { count: number };
  close(): Promise<void>;
}

const LEAD_JSON = `json_build_object('id', l.id, 'name', l.name, 'surname', l.surname, 'phone', l.phone, 'email', l.email, 'company', l.company,
  'avatar_url', l.avatar_url,
  'status', (SELECT json_build_object('id', s.id, 'name', s.name, 'color', s.color, 'created_at', ${ts('s.created_at')}, 'updated_at', ${ts('s.updated_at')})
             FROM lead_statuses s WHERE s.tenant_id = l.tenant_id AND s.id = l.status_id),
  'tags', COALESCE((SELECT json_agg(json_build_object('id', t.id, 'name', t.name, 'color', t.color, 'created_at', ${ts('t.created_at')}, 'updated_at', ${ts('t.updated_at')}) ORDER BY t.name, t.id)
                    FROM lead_tags lt JOIN tags t ON t.tenant_id = lt.tenant_id AND t.id = lt.tag_id WHERE lt.tenant_id = l.tenant_id AND lt.lead_id = l.id), '[]'),
  'custom_fields', l.custom_fields, 'created_at', ${ts('l.created_at')}, 'updated_at', ${ts('l.updated_at')})`;

const CONVERSATION_JSON = `json_build_object('id', c.id, 'lead', json_build_object('id', l.id, 'name', l.name, 'phone', l.phone),
  'last_message', CASE WHEN c.last_message_at IS NULL THEN NULL
                       ELSE json_build_object('content', c.last_message_content, 'role', c.last_message_role, 'timestamp', ${ts('c.last_message_at')}) END,
  'unread_count', c.unread_count, 'status', c.status, 'department_id', c.department_id, 'channel_id', c.channel_id,
  'created_at', ${ts('c.created_at')}, 'updated_at', ${ts('c.updated_at')})`;

const MESSAGE_JSON = `json_build_object('id', m.id, 'lead_id', m.lead_id, 'conversation_id', m.conversation_id, 'channel_id', m.channel_id,
  'content', m.content, 'type', m.type, 'role', m.role, 'status', m.status, 'error', m.error, 'provider_message_id', m.provider_message_id,
  'media_url', NULL, 'timestamp', ${ts('m.created_at')})`;

const LIST_SQL = `
  WITH page AS (SELECT * FROM conversations WHERE tenant_id = $1 ORDER BY updated_at DESC, id DESC LIMIT $2 OFFSET $3)
  SELECT (SELECT count(*) FROM conversations WHERE tenant_id = $1)::int AS total,
         COALESCE((SELECT json_agg(${CONVERSATION_JSON} ORDER BY c.updated_at DESC, c.id DESC)
                   FROM page c JOIN leads l ON l.tenant_id = c.tenant_id AND l.id = c.lead_id), '[]')::text AS data`;

/** An event of the organisation ($1) whose data is `data` read FROM `from`, its dispatch job, and the NOTIFY: one statement. */
const emitSql = (type: string, data: string, from: string) => `
  WITH e AS (INSERT INTO events (tenant_id, type, data) SELECT $1, '${type}', (${data})::jsonb FROM ${from} RETURNING tenant_id, id),
       j AS (INSERT INTO jobs (queue, payload, group_key) SELECT 'events.dispatch', jsonb_build_object('tenant_id', e.tenant_id, 'event_id', e.id), e.tenant_id::text FROM e RETURNING id)
  SELECT pg_notify('funil_jobs', $1::text) FROM j`;

const LEAD_CREATED = emitSql('lead.created', LEAD_JSON, 'leads l WHERE l.tenant_id = $1 AND l.id = $2');
const CONVERSATION_CREATED = emitSql(
  'conversation.created',
  CONVERSATION_JSON,
  'conversations c JOIN leads l ON l.tenant_id = c.tenant_id AND l.id = c.lead_id WHERE c.tenant_id = $1 AND c.id = $2',
);
const MESSAGE_RECEIVED = emitSql('message.received', MESSAGE_JSON, 'messages m WHERE m.tenant_id = $1 AND m.id = $2');

const ANSWER_SQL = `
  SELECT json_build_object('lead', ${LEAD_JSON}, 'conversation', ${CONVERSATION_JSON}, 'message', ${MESSAGE_JSON})::text AS data
  FROM messages m JOIN conversations c ON c.tenant_id = m.tenant_id AND c.id = m.conversation_id JOIN leads l ON l.tenant_id = m.tenant_id AND l.id = m.lead_id
  WHERE m.tenant_id = $1 AND m.id = $2`;

/** The inbound `from` as E.164 (the app's rule for plain digits with an optional +). */
const e164 = (from: unknown) => (typeof from === 'string' && /^\+?[1-9]\d{7,14}$/.test(from) ? `+${from.replace(/^\+/, '')}` : null);

async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown> | null> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return null;
  }
}

/** The statuses a reported one may replace: never backwards. */
const EARLIER: Record<string, string[]> = { sent: ['pending'], delivered: ['pending', 'sent'], read: ['pending', 'sent', 'delivered'] };

const STATUS_SQL = `UPDATE messages SET status = $4::"MessageStatus", updated_at = now()
  WHERE tenant_id = $1 AND channel_id = $2 AND provider_message_id = $3 AND role = 'assistant' AND status = ANY($5::"MessageStatus"[])`;

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startRawMessagingServer(
  connectionString: string,
  schema: string,
  poolSize: number,
  /** Channel id → app secret, for POST /channels/{id}/whatsapp. */
  whatsappSecrets = new Map<string, string>(),
): Promise<RawMessagingServer> {
  const { pool, statements, query } = countingPool(connectionString, schema, poolSize);

  async function whatsapp(channelId: string, req: http.IncomingMessage): Promise<[number, string]> {
    const raw = await readBody(req);
    const secret = whatsappSecrets.get(channelId);
    const expected = Buffer.from(
      `sha256=${createHmac('sha256', secret ?? '')
        .update(raw)
        .digest('hex')}`,
    );
    const given = Buffer.from(String(req.headers['x-hub-signature-256'] ?? ''));
    if (!secret || given.length !== expected.length || !timingSafeEqual(given, expected)) return [401, UNAUTHORIZED];
    const {
      rows: [channel],
    } = await query('SELECT tenant_id FROM channels WHERE id = $1', [channelId]);
    if (!channel) return [404, '{"success":false,"error":{"code":"NOT_FOUND","message":"Canal não encontrado(a)"}}'];
    const payload = JSON.parse(raw.toString('utf8'));
    let messages = 0;
    let statuses = 0;
    for (const entry of payload.entry ?? [])
      for (const change of entry.changes ?? []) {
        for (const m of change.value?.messages ?? []) {
          const [status] = await inbound(channel.tenant_id, channelId, { from: m.from, content: m.text?.body }, m.id);
          if (status === 200) messages++;
        }
        for (const st of change.value?.statuses ?? []) {
          const r = await query(STATUS_SQL, [channel.tenant_id, channelId, st.id, st.status, EARLIER[st.status] ?? []]);
          if (r.rowCount) statuses++;
        }
      }
    return [200, JSON.stringify({ success: true, data: { messages, statuses } })];
  }

  async function inbound(
    tenantId: string,
    channelId: string,
    body: Record<string, unknown> | null,
    providerMessageId: string | null = null,
  ): Promise<[number, string]> {
    const phone = e164(body?.from);
    const content = body?.content;
    if (!phone || typeof content !== 'string' || !content.trim())
      return [400, '{"success":false,"error":{"code":"VALIDATION_ERROR","message":"Dados inválidos"}}'];
    const client = await pool.connect();
    const q = (sql: string, params: unknown[]) => {
      statements.count++;
      return client.query(sql, params);
    };
    try {
      await q('BEGIN', []);
      const {
        rows: [channel],
      } = await q('SELECT id, department_id FROM channels WHERE tenant_id = $1 AND id = $2', [tenantId, channelId]);
      if (!channel) {
        await q('ROLLBACK', []);
        return [404, '{"success":false,"error":{"code":"NOT_FOUND","message":"Canal não encontrado(a)"}}'];
      }
      let {
        rows: [lead],
      } = await q('INSERT INTO leads (tenant_id, name, phone) VALUES ($1, $2, $2) ON CONFLICT (tenant_id, phone) DO NOTHING RETURNING id', [
        tenantId,
        phone,
      ]);
      if (lead) await q(LEAD_CREATED, [tenantId, lead.id]);
      else [lead] = (await q('SELECT id FROM leads WHERE tenant_id = $1 AND phone = $2', [tenantId, phone])).rows;
      let {
        rows: [conversation],
      } = await q(
        `INSERT INTO conversations (tenant_id, lead_id, channel_id, department_id) VALUES ($1, $2, $3, $4)
         ON CONFLICT (tenant_id, lead_id) WHERE status = 'active' DO NOTHING RETURNING id`,
        [tenantId, lead.id, channel.id, channel.department_id],
      );
      if (conversation) await q(CONVERSATION_CREATED, [tenantId, conversation.id]);
      else
        [conversation] = (
          await q(`SELECT id FROM conversations WHERE tenant_id = $1 AND lead_id = $2 AND status = 'active'`, [tenantId, lead.id])
        ).rows;
      const {
        rows: [message],
      } = await q(
        `INSERT INTO messages (tenant_id, conversation_id, lead_id, channel_id, role, type, content, status, provider_message_id)
         VALUES ($1, $2, $3, $4, 'user', 'text', $5, 'received', $6)
         ON CONFLICT (tenant_id, channel_id, provider_message_id) DO NOTHING RETURNING id, content, created_at`,
        [tenantId, conversation.id, lead.id, channel.id, content, providerMessageId],
      );
      if (!message) {
        // Stored already: the provider resent it.
        await q('ROLLBACK', []);
        return [409, '{"success":false,"error":{"code":"CONFLICT","message":"Mensagem já recebida"}}'];
      }
      await q(
        `UPDATE conversations SET unread_count = unread_count + 1,
           last_message_content = CASE WHEN last_message_at IS NULL OR last_message_at <= $3 THEN $4 ELSE last_message_content END,
           last_message_role = CASE WHEN last_message_at IS NULL OR last_message_at <= $3 THEN 'user'::"MessageRole" ELSE last_message_role END,
           last_message_at = GREATEST(last_message_at, $3), updated_at = now()
         WHERE tenant_id = $1 AND id = $2`,
        [tenantId, conversation.id, message.created_at, message.content],
      );
      await q(MESSAGE_RECEIVED, [tenantId, message.id]);
      const {
        rows: [answer],
      } = await q(ANSWER_SQL, [tenantId, message.id]);
      await q('COMMIT', []);
      return [200, `{"success":true,"data":${answer.data}}`];
    } catch (e) {
      await client.query('ROLLBACK').catch(() => {});
      throw e;
    } finally {
      client.release();
    }
  }

  const server = http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? '/', 'http://raw');
      const whatsappPath = /^\/channels\/([0-9a-f-]{36})\/whatsapp$/.exec(url.pathname);
      if (req.method === 'POST' && whatsappPath) return send(res, ...(await whatsapp(whatsappPath[1], req)));
      const tenantId = await tenantOfKey(query, req.headers.authorization);
      if (!tenantId) return send(res, 401, UNAUTHORIZED);
      if (req.method === 'GET' && url.pathname === '/conversations') {
        const rawLimit = Number(url.searchParams.get('limit') ?? 20);
        const limit = Number.isInteger(rawLimit) && rawLimit >= 1 && rawLimit <= 100 ? rawLimit : 20;
        const rawOffset = Number(url.searchParams.get('offset') ?? 0);
        const offset = Number.isInteger(rawOffset) && rawOffset >= 0 ? rawOffset : 0;
        const {
          rows: [r],
        } = await query(LIST_SQL, [tenantId, limit, offset]);
        const pagination = { total: r.total, limit, offset, has_more: offset + limit < r.total, next_cursor: null };
        return send(res, 200, `{"success":true,"data":${r.data},"pagination":${JSON.stringify(pagination)}}`);
      }
      const inboundPath = /^\/channels\/([0-9a-f-]{36})\/inbound$/.exec(url.pathname);
      if (req.method === 'POST' && inboundPath) return send(res, ...(await inbound(tenantId, inboundPath[1], await readJson(req))));
      send(res, 404, '{"success":false,"error":{"code":"NOT_FOUND","message":"Rota não encontrada"}}');
    } catch (e) {
      send(res, 500, JSON.stringify({ success: false, error: { code: 'INTERNAL_ERROR', message: String(e) } }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    statements,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await pool.end();
    },
  };
}
