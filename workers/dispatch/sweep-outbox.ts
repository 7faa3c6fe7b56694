// The outbox sweeper: BindRequests committed but never sent (a worker died between its commit and
// its send), and requests sent long ago without a result, go (again) to their cluster's queue.
// A request whose job is still on the queue is left alone — the agent has not got to it yet; one
// whose job ended without the result reaching us (failed, or removed) is sent afresh. Looking a
// job up costs one hash read, whatever the queue's backlog.
import {
  type BindRequest,
  bindRequestsToDispatch,
  openBindRequests,
  type Store,
} from "../../src/store/index.js";
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
  return sweepRows(store, dispatcher, rows);
}

/** The sweep of rows read at its start (bindRequestsToDispatch). */
export async function sweepRows(
  store: Store,
  dispatcher: BindDispatcher,
  rows: readonly BindRequest[],
): Promise<SweepReport> {
  const pending = rows.filter((r) => r.state === "PENDING");
  const dispatched = rows.filter((r) => r.state === "DISPATCHED");
  const states = await dispatcher.queueStates(dispatched);
  const left = dispatched.filter((r) => states.get(r.id) !== "queued");
  // The agent completes a queue job only once the API has its result: a request that got its
  // result while the rows were read and looked up is closed now, and is not sent again.
  const open = new Set(
    await openBindRequests(
      store,
      left.map((r) => r.id),
    ),
  );
  const resend = left.filter((r) => open.has(r.id));
  // A finished job keeps its id: remove it so the new send is a new job, not a no-op.
  const finished = resend.filter((r) => states.get(r.id) === "finished");
  await Promise.all(finished.map((r) => dispatcher.queue(r.clusterName).remove(r.id)));
  const sent = await dispatcher.send(pending, "sweeper");
  const resent = await dispatcher.send(resend, "sweeper");
  return { sent, resent, stillQueued: dispatched.length - left.length };
}
