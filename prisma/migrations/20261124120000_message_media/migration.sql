-- Media messages (POST /backend/messages/send-media): the file's storage key (also its media proxy
-- path), its content type, size and the client's file name.

-- AlterTable
ALTER TABLE "messages" ADD COLUMN "media_key" TEXT,
ADD COLUMN "media_mime_type" TEXT,
ADD COLUMN "media_size" INTEGER,
ADD COLUMN "media_filename" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "messages_media_key_key" ON "messages"("media_key");
