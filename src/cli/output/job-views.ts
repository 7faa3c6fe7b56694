// Tables and detail views of jobs: `get jobs`, `get job ID`, `why JOB`.
import type { JobDetail, JobSummary, PendingReason, ResourceName } from "../client/types.js";
import { formatLabels } from "../label-selector.js";
import { formatAge, formatBytes, formatCpu, formatGpu, formatSeconds } from "./format.js";
import { podCounts } from "./job-progress.js";
import { renderTable } from "./table.js";

export function jobsTable(jobs: readonly JobSummary[], now = Date.now()): string {
  return renderTable(
    [
      { header: "ID", value: (j) => j.id },
      { header: "NAME", value: (j) => j.name },
      { header: "QUEUE", value: (j) => j.queue.name },
      { header: "CLUSTER", value: (j) => j.cluster?.name ?? "-" },
      { header: "STATE", value: (j) => j.state },
      {
        header: "PODS",
        value: (j) => {
          const c = podCounts(j);
          return `${c.running + c.succeeded}/${c.total}`;
        },
        align: "right",
      },
      { header: "AGE", value: (j) => formatAge(j.createdAt, now), align: "right" },
      // only when some job has labels
      ...(jobs.some((j) => j.labels?.length)
        ? [{ header: "LABELS", value: (j: JobSummary) => formatLabels(j.labels ?? []) }]
        : []),
    ],
    jobs,
  );
}

export function formatShort(resource: ResourceName, amount: number): string {
  if (resource === "GPU") return `${formatGpu(amount)} GPU`;
  if (resource === "CPU") return `${formatCpu(amount)} CPU`;
  return `${formatBytes(amount)} memory`;
}

export function pendingReasonView(reason: PendingReason): string {
  const lines = [`Pending: ${reason.message}`];
  if (reason.clusters.length) {
    lines.push(
      "",
      renderTable(
        [
          { header: "CLUSTER", value: (c) => c.cluster },
          {
            header: "SHORT OF",
            value: (c) => c.short.map((s) => formatShort(s.resource, s.amount)).join(", ") || "-",
          },
          { header: "REASON", value: (c) => c.message },
        ],
        reason.clusters,
      ),
    );
  }
  return lines.join("\n");
}

/** "2026-12-01T19:05:00.000Z on a100-small (in 12m)", or why there is no estimate. */
export function estimatedStartView(
  job: Pick<JobDetail, "estimatedStart" | "estimatedCluster">,
  now = Date.now(),
): string {
  if (!job.estimatedStart)
    return "unknown (beyond the estimator's horizon, or waiting on jobs with no known run time)";
  const inSeconds = Math.round((Date.parse(job.estimatedStart) - now) / 1000);
  const when = inSeconds > 0 ? `in ${formatSeconds(inSeconds)}` : "now";
  return `${job.estimatedStart}${job.estimatedCluster ? ` on ${job.estimatedCluster}` : ""} (${when})`;
}

export function jobDetailView(job: JobDetail, now = Date.now()): string {
  const c = podCounts(job);
  const lines = [
    `Job:        ${job.name} (${job.id})`,
    `State:      ${job.state}`,
    `Queue:      ${job.queue.name}`,
    `Cluster:    ${job.cluster?.name ?? (job.requestedCluster ? `${job.requestedCluster} (requested)` : "- (admission chooses)")}`,
    `Priority:   ${job.priority}   min member: ${job.minMember}`,
    `Pods:       ${c.pending} pending, ${c.running} running, ${c.succeeded} succeeded, ${c.failed} failed`,
    `Submitted:  ${job.createdAt} by ${job.submittedBy} (${formatAge(job.createdAt, now)} ago)`,
  ];
  if (job.labels?.length) lines.push(`Labels:     ${formatLabels(job.labels)}`);
  if (job.maxRuntimeSeconds != null || job.expectedRuntimeSeconds != null) {
    const parts = [
      job.maxRuntimeSeconds != null ? `limit ${formatSeconds(job.maxRuntimeSeconds)}` : "no limit",
      ...(job.expectedRuntimeSeconds != null
        ? [`expected ${formatSeconds(job.expectedRuntimeSeconds)}`]
        : []),
    ];
    lines.push(`Run time:   ${parts.join(", ")}`);
  }
  if (job.startedAt) lines.push(`Started:    ${job.startedAt}`);
  if (job.state === "PENDING") lines.push(`Estimated:  ${estimatedStartView(job, now)}`);
  if (job.finishedAt) lines.push(`Finished:   ${job.finishedAt}`);
  if (job.pendingReason) lines.push("", pendingReasonView(job.pendingReason));
  lines.push(
    "",
    renderTable(
      [
        { header: "POD", value: (p) => p.name },
        { header: "TASK", value: (p) => p.task },
        { header: "STATE", value: (p) => p.state },
        { header: "NODE", value: (p) => p.node ?? "-" },
        { header: "MESSAGE", value: (p) => p.message ?? "" },
      ],
      job.pods,
    ),
  );
  if (job.events.length) {
    lines.push(
      "",
      renderTable(
        [
          { header: "AT", value: (e) => e.at },
          { header: "KIND", value: (e) => e.kind },
          { header: "BY", value: (e) => e.actor ?? "-" },
          { header: "MESSAGE", value: (e) => e.message },
        ],
        job.events.slice(-20),
      ),
    );
  }
  return lines.join("\n");
}
