-- WhatsApp identities beside the phone: Meta's business-scoped user id (BSUID, unique per organisation)
-- and the username (display only). A lead an inbound message created from a BSUID alone has no phone.
ALTER TABLE "leads" ADD COLUMN "whatsapp_user_id" TEXT,
ADD COLUMN "whatsapp_username" TEXT,
ALTER COLUMN "phone" DROP NOT NULL;

CREATE UNIQUE INDEX "leads_tenant_id_whatsapp_user_id_key" ON "leads"("tenant_id", "whatsapp_user_id");

-- Brazilian mobiles are stored with their ninth digit (+55 DD 8 digits starting 6-9 → +55 DD 9 …).
-- A number whose other form another lead of the organisation holds already is left as it is: the
-- lookups match both forms, and merging the two leads is the organisation's choice.
UPDATE "leads" l SET "phone" = '+55' || substr(l."phone", 4, 2) || '9' || substr(l."phone", 6)
WHERE l."phone" ~ '^\+55[1-9]{2}[6-9][0-9]{7}$'
  AND NOT EXISTS (
    SELECT 1 FROM "leads" o
    WHERE o."tenant_id" = l."tenant_id" AND o."phone" = '+55' || substr(l."phone", 4, 2) || '9' || substr(l."phone", 6)
  );
