// Metrics of what committed transactions changed: jobs that started for the first time, jobs that
// finished, binds the agents carried out. Counted from each transaction's events once it has
// committed, in the process that committed it: a transition is one transaction, committed by one
// process (an API replica for agents' reports and users' cancels, a worker for run-time limits,
// admission refusals, lost clusters), so every process counts what it committed and the sum over
// all API and worker processes counts each transition exactly once. The events' Redis channel
// would not do: every replica hears every event (counted once per replica), and pub/sub may drop
// some. Process-wide: `fleetq dev`'s API and workers share these.
import { Counter, Histogram, Registry } from "prom-client";
import type { BindResultEventData, EventSink, JobStartEventData, StoreEvent } from "../store/index.js";

export const transitionMetrics = new Registry();

/** Seconds to two days: a job may start at once on an idle cluster or wait a day for quota. */
export const JOB_WAIT_BUCKETS = [
  1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14_400, 43_200, 86_400, 172_800,
];

/** 50 ms to 5 min: the next cycle's dispatch, the agent's queue, creating and binding the pod
 * (a Kubernetes API server under load, image pulls are not part of it). */
export const BIND_LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

const jobWait = new Histogram({
  name: "fleetq_job_wait_seconds",
  help: "Time from a job's submission to its first RUNNING, by queue and cluster",
  labelNames: ["queue", "cluster"] as const,
  buckets: JOB_WAIT_BUCKETS,
  registers: [transitionMetrics],
});

const jobsFinished = new Counter({
  name: "fleetq_jobs_finished_total",
  help: "Jobs that ended, by queue, cluster ('' when never admitted) and outcome (succeeded, failed, cancelled)",
  labelNames: ["queue", "cluster", "outcome"] as const,
  registers: [transitionMetrics],
});

const bindLatency = new Histogram({
  name: "fleetq_bind_latency_seconds",
  help: "Time from a bind's commit (the scheduler's decision) to the agent's report of its success, by cluster",
  labelNames: ["cluster"] as const,
  buckets: BIND_LATENCY_BUCKETS,
  registers: [transitionMetrics],
});

const FINISHED = new Map([
  ["job.succeeded", "succeeded"],
  ["job.failed", "failed"],
  ["job.cancelled", "cancelled"],
]);

/** Counts what committed events say; the rest is ignored. */
function observeCommitted(events: readonly StoreEvent[]): void {
  for (const e of events) {
    const cluster = e.cluster ?? "";
    const outcome = FINISHED.get(e.kind);
    if (outcome) jobsFinished.inc({ queue: e.queue ?? "", cluster, outcome });
    else if (e.kind === "job.running" && e.data) {
      jobWait.observe({ queue: e.queue ?? "", cluster }, (e.data as JobStartEventData).waitSeconds);
    } else if (e.kind === "bind.result" && e.data) {
      for (const s of (e.data as BindResultEventData).bindSeconds) bindLatency.observe({ cluster }, s);
    }
  }
}

/** The sink a process's store publishes through, counting what it publishes first. */
export function countingCommitted(sink: EventSink): EventSink {
  return {
    publish(events) {
      observeCommitted(events);
      return sink.publish(events);
    },
  };
}
