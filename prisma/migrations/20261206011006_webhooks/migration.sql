-- CreateEnum
CREATE TYPE "WebhookDeliveryState" AS ENUM ('PENDING', 'SUCCEEDED', 'FAILED');

-- CreateTable
CREATE TABLE "webhook" (
    "id" UUID NOT NULL,
    "url" TEXT NOT NULL,
    "events" TEXT[],
    "queues" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "labels" JSONB NOT NULL DEFAULT '[]',
    "secret" TEXT NOT NULL,
    "allow_private_targets" BOOLEAN NOT NULL DEFAULT false,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "disabled_reason" TEXT,
    "disabled_at" TIMESTAMP(3),
    "consecutive_failures" INTEGER NOT NULL DEFAULT 0,
    "created_by" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_delivery" (
    "id" UUID NOT NULL,
    "webhook_id" UUID NOT NULL,
    "event_id" BIGINT NOT NULL,
    "event" TEXT NOT NULL,
    "job_id" UUID,
    "payload" JSONB NOT NULL,
    "state" "WebhookDeliveryState" NOT NULL DEFAULT 'PENDING',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "response_code" INTEGER,
    "error" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_attempt_at" TIMESTAMP(3),
    "finished_at" TIMESTAMP(3),

    CONSTRAINT "webhook_delivery_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_outbox" (
    "event_id" BIGINT NOT NULL,

    CONSTRAINT "webhook_outbox_pkey" PRIMARY KEY ("event_id")
);

-- CreateIndex
CREATE INDEX "webhook_delivery_webhook_id_created_at_idx" ON "webhook_delivery"("webhook_id", "created_at");

-- CreateIndex
CREATE INDEX "webhook_delivery_state_created_at_idx" ON "webhook_delivery"("state", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_delivery_webhook_id_event_id_key" ON "webhook_delivery"("webhook_id", "event_id");

-- AddForeignKey
ALTER TABLE "webhook_delivery" ADD CONSTRAINT "webhook_delivery_webhook_id_fkey" FOREIGN KEY ("webhook_id") REFERENCES "webhook"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The outbox of webhook events: written in the transaction that records the event, so an event
-- is fanned out to deliveries exactly once however many workers there are (docs/webhooks.md).
-- pods.evicted is a scheduling cycle's eviction of a job's pods (job.preempted). Nothing is
-- written while no webhook is enabled.
CREATE FUNCTION "webhook_outbox_add"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM "webhook" WHERE "enabled") THEN
    INSERT INTO "webhook_outbox" ("event_id") VALUES (NEW.id);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER "event_webhook_outbox" AFTER INSERT ON "event" FOR EACH ROW
  WHEN (NEW.kind IN ('job.succeeded', 'job.failed', 'pods.evicted', 'job.restarted',
                     'job.waiting_past_estimate', 'cluster.lost'))
  EXECUTE FUNCTION "webhook_outbox_add"();
