// The workers' Prometheus metrics, in their own registry (the API's /metrics can merge it).
// Created once per process: several startWorkers() in one process share them.
import { Counter, Gauge, Histogram, Registry } from "prom-client";

export const metrics = new Registry();

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export const cycleDuration = new Histogram({
  name: "fleetq_cycle_duration_seconds",
  help: "Scheduling cycle duration (snapshot, session, commit, dispatch), by cluster and outcome",
  labelNames: ["cluster", "outcome"] as const,
  buckets: DURATION_BUCKETS,
  registers: [metrics],
});

/** 1 ms to 30 s: an incremental load or a small session takes milliseconds; a cluster's first
 * load (thousands of nodes, a hundred thousand pods) and a commit of thousands of binds, seconds. */
export const cyclePhase = new Histogram({
  name: "fleetq_cycle_phase_seconds",
  help: "Time a scheduling cycle spent in each phase (load: the view brought up to date; session; commit; dispatch), by cluster and phase",
  labelNames: ["cluster", "phase"] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [metrics],
});

export const cyclesTotal = new Counter({
  name: "fleetq_cycles_total",
  help: "Scheduling cycles by cluster and outcome (committed: changed something; idle; failed; skipped: asked for by reports that changed nothing)",
  labelNames: ["cluster", "outcome"] as const,
  registers: [metrics],
});

export const staleRetriesTotal = new Counter({
  name: "fleetq_cycle_stale_retries_total",
  help: "Cycles re-run because the cluster changed between snapshot and commit",
  labelNames: ["cluster"] as const,
  registers: [metrics],
});

export const decisionsTotal = new Counter({
  name: "fleetq_cycle_decisions_total",
  help: "Committed scheduling decisions by cluster and kind (bind, evict, pipeline)",
  labelNames: ["cluster", "kind"] as const,
  registers: [metrics],
});

export const stoppedSearches = new Gauge({
  name: "fleetq_search_cursors",
  help: "Victim searches the scenario budget stopped in the cluster's last cycle, going on in the next",
  labelNames: ["cluster"] as const,
  registers: [metrics],
});

export const dispatchedTotal = new Counter({
  name: "fleetq_bind_requests_dispatched_total",
  help: "BindRequests put on a cluster's bind queue, by who sent them (cycle, sweeper)",
  labelNames: ["cluster", "via"] as const,
  registers: [metrics],
});

/** 10 ms to 2 min: a pass over a few jobs reads the owners' digests; thousands of jobs on many
 * clusters run many dry runs, and a pass waits for an owner busy with a full load. */
export const admissionPass = new Histogram({
  name: "fleetq_admission_pass_seconds",
  help: "Admission pass duration (every job without a cluster given one, or a reason per cluster)",
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
  registers: [metrics],
});

export const admissionDecisionsTotal = new Counter({
  name: "fleetq_admission_decisions_total",
  help: "Admission decisions by outcome (assigned, reassigned, unplaced) and cluster ('' when unplaced)",
  labelNames: ["outcome", "cluster"] as const,
  registers: [metrics],
});

export const admissionDryRunsTotal = new Counter({
  name: "fleetq_admission_dry_runs_total",
  help: "Allocate dry runs admission ran, by kind (now: jobs on a cluster as it is; empty: a job shape on a cluster's empty nodes; reserve: a cluster's own unplaced jobs)",
  labelNames: ["kind"] as const,
  registers: [metrics],
});

export const taskErrorsTotal = new Counter({
  name: "fleetq_worker_errors_total",
  help: "Failed worker tasks (cycle, admission, sweep, usage) that were logged and will run again",
  labelNames: ["task"] as const,
  registers: [metrics],
});

export const jobsMovedFromLostClusters = new Counter({
  name: "fleetq_lost_cluster_jobs_total",
  help: "Jobs sent back to admission from LOST clusters (readmitted: no pod placed; requeued: placed pods taken back)",
  labelNames: ["how"] as const,
  registers: [metrics],
});

export const jobsPastRuntimeLimit = new Counter({
  name: "fleetq_jobs_runtime_limit_total",
  help: "Jobs stopped (FAILED, pods evicted) because they ran past their maxRuntimeSeconds",
  registers: [metrics],
});

export const clusterOwned = new Gauge({
  name: "fleetq_cluster_owned",
  help: "1 for each cluster this worker owns (runs the cycles of), by cluster and worker",
  labelNames: ["cluster", "worker"] as const,
  registers: [metrics],
});

export const clusterTakeovers = new Counter({
  name: "fleetq_cluster_takeovers_total",
  help: "Clusters this worker took over (a lease acquired: at start, on rebalance, after a worker left or died)",
  labelNames: ["worker"] as const,
  registers: [metrics],
});

export const webhookAttemptsTotal = new Counter({
  name: "fleetq_webhook_attempts_total",
  help: "Webhook delivery attempts by outcome (succeeded; failed: an error answer or none; refused: the target not allowed)",
  labelNames: ["outcome"] as const,
  registers: [metrics],
});

export const webhooksDisabledTotal = new Counter({
  name: "fleetq_webhooks_disabled_total",
  help: "Webhooks disabled after failed deliveries in a row",
  registers: [metrics],
});
