// The outbox sweeper: BindRequests committed but never sent (a worker died between its commit and
// its send), and requests sent long ago without a result, go (again) to their cluster's queue.
// A request whose job is still on the queue is left alone — the agent has not got to it yet; one
// whose job ended without the result reaching us (failed, or removed) is sent afresh.
import type { JobState } from "bullmq";
import { bindRequestsToDispatch, type Store } from "../../src/store/index.js";
import type { BindDispatcher } from "./bind-dispatcher.js";

export interface SweepOptions {
  /** PENDING rows younger than this belong to the cycle that is sending them. */
  pendingGraceMs: number;
  /** DISPATCHED rows older than this without a result are looked at. */
  redispatchAfterMs: number;
  limit?: number;
  /** The sweeper's clock (default: now). */
  now?: Date;
}

export interface SweepReport {
  /** PENDING rows sent. */
  sent: number;
  /** DISPATCHED rows sent again. */
  resent: number;
  /** DISPATCHED rows whose job is still queued. */
  stillQueued: number;
}

const IN_FLIGHT: readonly (JobState | "unknown")[] = [
  "waiting",
  "active",
  "delayed",
  "prioritized",
  "waiting-children",
];

export async function sweepOutbox(
  store: Store,
  dispatcher: BindDispatcher,
  o: SweepOptions,
): Promise<SweepReport> {
  const rows = await bindRequestsToDispatch(store, {
    pendingOlderThanMs: o.pendingGraceMs,
    redispatchAfterMs: o.redispatchAfterMs,
    limit: o.limit ?? 5000,
    now: o.now,
  });
  const pending = rows.filter((r) => r.state === "PENDING");
  const dispatched = rows.filter((r) => r.state === "DISPATCHED");
  const states = await Promise.all(dispatched.map((r) => dispatcher.queue(r.clusterName).getJobState(r.id)));
  const resend = dispatched.filter((_, i) => !IN_FLIGHT.includes(states[i]!));
  // A finished job keeps its id: remove it so the new send is a new job, not a no-op.
  const finished = dispatched.filter((_, i) => states[i] === "completed" || states[i] === "failed");
  await Promise.all(finished.map((r) => dispatcher.queue(r.clusterName).remove(r.id)));
  const sent = await dispatcher.send(pending, "sweeper");
  const resent = await dispatcher.send(resend, "sweeper");
  return { sent, resent, stillQueued: dispatched.length - resend.length };
}
