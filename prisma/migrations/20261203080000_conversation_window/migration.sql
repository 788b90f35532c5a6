-- The WhatsApp customer-service window: a conversation's last inbound message, kept on its row by the
-- message's own statement (window_expires_at is 24 h after it). Filled from the messages already there.
ALTER TABLE "conversations" ADD COLUMN "last_inbound_at" TIMESTAMPTZ(3);

UPDATE "conversations" c SET "last_inbound_at" = m.at
FROM (SELECT tenant_id, conversation_id, max(created_at) AS at FROM "messages" WHERE role = 'user' GROUP BY tenant_id, conversation_id) m
WHERE m.tenant_id = c.tenant_id AND m.conversation_id = c.id;
