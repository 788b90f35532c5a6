-- Template messages (POST /backend/messages/send-template): the template a message sends and its body
-- parameters as rendered for the lead, which the delivery hands to the provider. No foreign key: a
-- template removed by a later sync leaves its sent messages as they were.
ALTER TABLE "messages" ADD COLUMN "template_id" UUID,
ADD COLUMN "template_parameters" TEXT[] DEFAULT ARRAY[]::TEXT[];
