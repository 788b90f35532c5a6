-- Idempotency records belong to the caller (the API key), not the organisation: a stored answer is
-- only ever replayed to the key that made the request. The records are a 24-hour cache of answers;
-- the ones kept under the old scope are dropped (a retry after the upgrade runs again).
DELETE FROM "idempotency_keys";

ALTER TABLE "idempotency_keys" DROP CONSTRAINT "idempotency_keys_pkey";
ALTER TABLE "idempotency_keys" ADD COLUMN "api_key_id" UUID NOT NULL;
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("tenant_id", "api_key_id", "key");

-- AddForeignKey
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_tenant_id_api_key_id_fkey" FOREIGN KEY ("tenant_id", "api_key_id") REFERENCES "api_keys"("tenant_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
