-- A deleted user keeps its row (deals and their history still name it); its keys are revoked with it.
ALTER TABLE "users" ADD COLUMN "deleted_at" TIMESTAMPTZ(3);
