-- Messaging: departments and their members, channels, conversations and messages.
-- See src/domains/messaging/README.md.

-- CreateEnum
CREATE TYPE "ChannelProvider" AS ENUM ('test', 'whatsapp_cloud');

-- CreateEnum
CREATE TYPE "ConversationStatus" AS ENUM ('active', 'archived');

-- CreateEnum
CREATE TYPE "MessageRole" AS ENUM ('user', 'assistant');

-- CreateEnum
CREATE TYPE "MessageStatus" AS ENUM ('pending', 'sent', 'delivered', 'read', 'failed', 'received');

-- CreateTable
CREATE TABLE "departments" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "departments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "department_members" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "department_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "department_members_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "channels" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "provider" "ChannelProvider" NOT NULL,
    "department_id" UUID,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "config" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "channels_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "conversations" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "lead_id" UUID NOT NULL,
    "channel_id" UUID,
    "department_id" UUID,
    "status" "ConversationStatus" NOT NULL DEFAULT 'active',
    "unread_count" INTEGER NOT NULL DEFAULT 0,
    "last_message_content" TEXT,
    "last_message_role" "MessageRole",
    "last_message_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "conversations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "messages" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "conversation_id" UUID NOT NULL,
    "lead_id" UUID NOT NULL,
    "channel_id" UUID,
    "role" "MessageRole" NOT NULL,
    "type" TEXT NOT NULL DEFAULT 'text',
    "content" TEXT NOT NULL,
    "status" "MessageStatus" NOT NULL,
    "provider_message_id" TEXT,
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "messages_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "departments_tenant_id_id_key" ON "departments"("tenant_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "departments_tenant_id_name_key" ON "departments"("tenant_id", "name");

-- CreateIndex
CREATE INDEX "department_members_tenant_id_user_id_department_id_idx" ON "department_members"("tenant_id", "user_id", "department_id");

-- CreateIndex
CREATE UNIQUE INDEX "department_members_tenant_id_id_key" ON "department_members"("tenant_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "department_members_tenant_id_department_id_user_id_key" ON "department_members"("tenant_id", "department_id", "user_id");

-- CreateIndex
CREATE INDEX "channels_tenant_id_active_created_at_idx" ON "channels"("tenant_id", "active", "created_at");

-- CreateIndex
CREATE INDEX "channels_tenant_id_department_id_idx" ON "channels"("tenant_id", "department_id");

-- CreateIndex
CREATE UNIQUE INDEX "channels_tenant_id_id_key" ON "channels"("tenant_id", "id");

-- CreateIndex
CREATE INDEX "conversations_tenant_id_updated_at_id_idx" ON "conversations"("tenant_id", "updated_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "conversations_tenant_id_status_updated_at_idx" ON "conversations"("tenant_id", "status", "updated_at" DESC);

-- CreateIndex
CREATE INDEX "conversations_tenant_id_department_id_updated_at_idx" ON "conversations"("tenant_id", "department_id", "updated_at" DESC);

-- CreateIndex: at most one open conversation per lead; inbound and send insert with ON CONFLICT on it.
CREATE UNIQUE INDEX "conversations_one_open_per_lead" ON "conversations"("tenant_id", "lead_id") WHERE "status" = 'active';

-- CreateIndex
CREATE INDEX "conversations_tenant_id_lead_id_status_idx" ON "conversations"("tenant_id", "lead_id", "status");

-- CreateIndex
CREATE INDEX "conversations_tenant_id_channel_id_idx" ON "conversations"("tenant_id", "channel_id");

-- CreateIndex
CREATE UNIQUE INDEX "conversations_tenant_id_id_key" ON "conversations"("tenant_id", "id");

-- CreateIndex
CREATE INDEX "messages_tenant_id_conversation_id_created_at_id_idx" ON "messages"("tenant_id", "conversation_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "messages_tenant_id_lead_id_created_at_id_idx" ON "messages"("tenant_id", "lead_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "messages_tenant_id_provider_message_id_idx" ON "messages"("tenant_id", "provider_message_id");

-- CreateIndex
CREATE UNIQUE INDEX "messages_tenant_id_id_key" ON "messages"("tenant_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "messages_tenant_id_channel_id_provider_message_id_key" ON "messages"("tenant_id", "channel_id", "provider_message_id");

-- AddForeignKey
ALTER TABLE "departments" ADD CONSTRAINT "departments_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "department_members" ADD CONSTRAINT "department_members_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "department_members" ADD CONSTRAINT "department_members_tenant_id_department_id_fkey" FOREIGN KEY ("tenant_id", "department_id") REFERENCES "departments"("tenant_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "department_members" ADD CONSTRAINT "department_members_tenant_id_user_id_fkey" FOREIGN KEY ("tenant_id", "user_id") REFERENCES "users"("tenant_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "channels" ADD CONSTRAINT "channels_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
-- Deleting a department clears the reference (only department_id: tenant_id stays). PostgreSQL 15+.
ALTER TABLE "channels" ADD CONSTRAINT "channels_tenant_id_department_id_fkey" FOREIGN KEY ("tenant_id", "department_id") REFERENCES "departments"("tenant_id", "id") ON DELETE SET NULL ("department_id") ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_tenant_id_lead_id_fkey" FOREIGN KEY ("tenant_id", "lead_id") REFERENCES "leads"("tenant_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
-- A deleted channel's conversations and messages stay, without the channel.
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_tenant_id_channel_id_fkey" FOREIGN KEY ("tenant_id", "channel_id") REFERENCES "channels"("tenant_id", "id") ON DELETE SET NULL ("channel_id") ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_tenant_id_department_id_fkey" FOREIGN KEY ("tenant_id", "department_id") REFERENCES "departments"("tenant_id", "id") ON DELETE SET NULL ("department_id") ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "messages" ADD CONSTRAINT "messages_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "messages" ADD CONSTRAINT "messages_tenant_id_conversation_id_fkey" FOREIGN KEY ("tenant_id", "conversation_id") REFERENCES "conversations"("tenant_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "messages" ADD CONSTRAINT "messages_tenant_id_lead_id_fkey" FOREIGN KEY ("tenant_id", "lead_id") REFERENCES "leads"("tenant_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "messages" ADD CONSTRAINT "messages_tenant_id_channel_id_fkey" FOREIGN KEY ("tenant_id", "channel_id") REFERENCES "channels"("tenant_id", "id") ON DELETE SET NULL ("channel_id") ON UPDATE CASCADE;

