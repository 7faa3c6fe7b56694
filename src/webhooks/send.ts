// One webhook request: the target checked (target.ts), the body signed (signature.ts), sent to
// the checked address with a time limit; redirects are not followed (a 3xx is a failure).
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import {
  DELIVERY_HEADER,
  EVENT_HEADER,
  SIGNATURE_HEADER,
  signWebhook,
  TIMESTAMP_HEADER,
} from "./signature.js";
import { type ResolvedTarget, resolveTarget, TargetRefused } from "./target.js";

export interface WebhookRequest {
  url: string;
  secret: string;
  allowPrivateTargets: boolean;
  body: string;
  event: string;
  delivery: string;
  timeoutMs: number;
}

export interface SendOutcome {
  ok: boolean;
  responseCode: number | null;
  error: string | null;
  /** The target was refused before any request: trying again will not help. */
  refused: boolean;
}

/** Connects to the address checked, whatever the name resolves to now. */
const pinnedLookup =
  (t: ResolvedTarget): LookupFunction =>
  (_host, options, callback) => {
    if (options.all) callback(null, [{ address: t.address, family: t.family }]);
    else callback(null, t.address, t.family);
  };

function request(t: ResolvedTarget, r: WebhookRequest): Promise<SendOutcome> {
  const timestamp = Math.floor(Date.now() / 1000);
  const client = t.url.protocol === "https:" ? https : http;
  return new Promise((resolve) => {
    const req = client.request(
      t.url,
      {
        method: "POST",
        lookup: pinnedLookup(t),
        agent: false,
        headers: {
          "content-type": "application/json",
          "user-agent": "fleetq-webhooks",
          [SIGNATURE_HEADER]: signWebhook(r.secret, timestamp, r.body),
          [TIMESTAMP_HEADER]: String(timestamp),
          [EVENT_HEADER]: r.event,
          [DELIVERY_HEADER]: r.delivery,
        },
      },
      (res) => {
        res.resume();
        const code = res.statusCode ?? 0;
        const error =
          code >= 200 && code < 300
            ? null
            : code >= 300 && code < 400
              ? `HTTP ${code}: redirect to ${res.headers.location ?? "(no location)"} not followed`
              : `HTTP ${code}`;
        resolve({ ok: error === null, responseCode: code, error, refused: false });
      },
    );
    req.setTimeout(r.timeoutMs, () => req.destroy(new Error(`no answer within ${r.timeoutMs} ms`)));
    req.on("error", (err) => resolve({ ok: false, responseCode: null, error: err.message, refused: false }));
    req.end(r.body);
  });
}

export async function sendWebhook(r: WebhookRequest): Promise<SendOutcome> {
  let target: ResolvedTarget;
  try {
    target = await resolveTarget(r.url, r.allowPrivateTargets);
  } catch (err) {
    const refused = err instanceof TargetRefused;
    const error = refused ? `refused: ${(err as Error).message}` : (err as Error).message;
    return { ok: false, responseCode: null, error, refused };
  }
  return request(target, r);
}
