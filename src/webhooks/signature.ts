// How webhook requests are signed, and how a receiver checks them: HMAC-SHA256 with the webhook's
// secret over `<timestamp>.<body>` (the timestamp in Unix seconds, the body byte for byte), hex.
import { createHmac, timingSafeEqual } from "node:crypto";

export const SIGNATURE_HEADER = "x-fleetq-signature";
export const TIMESTAMP_HEADER = "x-fleetq-timestamp";
export const EVENT_HEADER = "x-fleetq-event";
export const DELIVERY_HEADER = "x-fleetq-delivery";

/** A receiver refuses requests signed longer ago than this (replays). */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** The signature header's value: `v1=<hex>` (the version lets the scheme change without doubt). */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  return `v1=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

/** Why a request's signature is not to be trusted, or null when it is. `now` in Unix seconds. */
export function webhookSignatureProblem(a: {
  secret: string;
  body: string;
  timestamp: string | undefined;
  signature: string | undefined;
  now?: number;
  toleranceSeconds?: number;
}): string | null {
  if (!a.timestamp || !/^\d+$/.test(a.timestamp)) return "missing or malformed timestamp";
  if (!a.signature) return "missing signature";
  const now = a.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(a.timestamp)) > (a.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS))
    return "timestamp too old (or too far ahead): a replay?";
  const expected = Buffer.from(signWebhook(a.secret, Number(a.timestamp), a.body));
  const given = Buffer.from(a.signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return "signature does not match";
  return null;
}
