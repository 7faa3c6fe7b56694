-- AlterTable
ALTER TABLE "event" ADD COLUMN     "data" JSONB;
