// Reads of a cluster that the API asks that cluster's agent for (a pod's log), over Redis: the
// API pushes a request onto the cluster's request list, which the agent pops; the agent answers
// on a stream of the request's own, which the API reads as it is written. The keys live under
// the agent's own prefix (agent-redis-acl.ts): an agent reaches its cluster's requests only.
// While the asker reads a followed stream it keeps the request's live key; once that is gone
// (the asker stopped or died), the agent stops.
import { agentOutcomePrefix } from "./agent-redis-acl.js";
import { BIND_QUEUE_PREFIX } from "./bind-request.js";

/** A stream carries at most this much (kubectl logs has no limit; an API replica does). */
export const LOG_LIMIT_BYTES = 10 * 1024 * 1024;
/** A followed stream ends after this long. */
export const LOG_LIMIT_MS = 3_600_000;
/** An agent skips a request that waited longer than this: its asker has given up. */
export const REQUEST_TTL_MS = 30_000;
/** The asker renews the live key this often; it expires after LIVE_TTL_MS unrenewed. */
export const LIVE_RENEW_MS = 2000;
export const LIVE_TTL_MS = 10_000;
/** A followed stream that has nothing to say sends an empty piece this often; a reader that hears
 * nothing for HEARTBEAT_TIMEOUT_MS takes the agent for gone. */
export const HEARTBEAT_MS = 10_000;
export const HEARTBEAT_TIMEOUT_MS = 30_000;
/** Answers are kept this long after their last entry (a slow reader, a retried read). */
export const REPLY_TTL_SECONDS = 120;

export interface AgentRequestKeys {
  /** The list requests wait on. */
  requests: string;
  reply(id: string): string;
  live(id: string): string;
}

export function agentRequestKeys(cluster: string, queuePrefix: string = BIND_QUEUE_PREFIX): AgentRequestKeys {
  const base = `${agentOutcomePrefix(cluster, queuePrefix)}:requests`;
  return { requests: base, reply: (id) => `${base}:reply:${id}`, live: (id) => `${base}:live:${id}` };
}

/** A pod's log: which run (the job's attempt) and how much of it. */
export interface LogRequest {
  id: string;
  kind: "logs";
  /** ms since the epoch, when the asker sent it. */
  sentAt: number;
  job: { id: string; name: string; namespace: string; createdInCluster: boolean };
  /** The pod's control-plane name ("<task>-<i>"). */
  pod: string;
  /** The run of the attempt after this many gang restarts. */
  restarts: number;
  /** The last this many lines; null = all. */
  tailLines: number | null;
  /** Lines written in the last this many seconds; null = all. */
  sinceSeconds: number | null;
  timestamps: boolean;
  /** Keep sending lines as they are written until the run ends (or a limit is reached). */
  follow: boolean;
}

/** One entry of an answer stream: log text (whole lines), the end (why), or a refusal. */
export type ReplyEntry =
  | { kind: "data"; text: string }
  | { kind: "end"; reason: string }
  | { kind: "error"; message: string; code: ReplyErrorCode };

/** gone: the pod is not on the cluster (any more); waiting: it has not started; failed: the
 * cluster did not answer as asked. */
export type ReplyErrorCode = "gone" | "waiting" | "failed";

/** Redis stream fields of an entry, and back. */
export function entryFields(entry: ReplyEntry): string[] {
  if (entry.kind === "data") return ["kind", "data", "text", entry.text];
  if (entry.kind === "end") return ["kind", "end", "reason", entry.reason];
  return ["kind", "error", "message", entry.message, "code", entry.code];
}

export function entryOf(fields: readonly string[]): ReplyEntry | null {
  const map = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) map.set(fields[i]!, fields[i + 1]!);
  const kind = map.get("kind");
  if (kind === "data") return { kind, text: map.get("text") ?? "" };
  if (kind === "end") return { kind, reason: map.get("reason") ?? "" };
  if (kind === "error") {
    const code = map.get("code");
    return {
      kind,
      message: map.get("message") ?? "",
      code: code === "gone" || code === "waiting" ? code : "failed",
    };
  }
  return null;
}
