// What the transition metrics are counted from: a job's first `job.running` event says how long
// it waited (as its stamps in the job row do), a later start says nothing; a `bind.result` event
// says, per successful bind, how long after its commit the agent reported it. And each job keeps
// the first start the estimator gave it, which the metrics of jobs waiting past it read.
import { afterAll, beforeAll, expect, it } from "vitest";
import { countingCommitted, transitionMetrics } from "../../src/metrics/transition-metrics.js";
import type { Store } from "../../src/store/index.js";
import {
  type BindResultEventData,
  eventsOfJobs,
  type JobStartEventData,
  MAX_EVENTS_PAGE,
  startsPastEstimate,
  withEvents,
} from "../../src/store/index.js";
import { replaceJobEstimates } from "../../src/store/operations/job-estimates.js";
import { createQueue } from "../../src/store/operations/queues.js";
import { reportBindResult, reportPodStatus } from "../../src/store/operations/report-pods.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { runCycle } from "../helpers/cycle.js";
import { sql } from "../helpers/db.js";
import type { TestStore } from "../helpers/store.js";
import { admin, agentOfC1, bindRequestsOf, job, jobOf, storeWithC1 } from "./fixtures.js";

let t: TestStore;
/** The store as the API's and the workers' are: counting what it publishes. */
let counted: Store;
// The metrics' registry is the process's: a queue of this file's own.
const QUEUE = `transitions-${Math.random().toString(36).slice(2, 8)}`;

beforeAll(async () => {
  t = await storeWithC1();
  await createQueue(t.store, admin, { name: QUEUE });
  counted = withEvents(t.store, countingCommitted(t.store.events));
});
afterAll(async () => t?.close());

const pods = ["worker-0", "worker-1"];
const report = (id: string, state: "RUNNING" | "PENDING" | "SUCCEEDED") =>
  reportPodStatus(counted, agentOfC1, {
    cluster: "c1",
    updates: pods.map((pod) => ({ job: id, pod, state })),
  });

async function bindAll(id: string): Promise<void> {
  await runCycle(counted, "c1");
  const binds = (await bindRequestsOf(t, id)).filter((b) => b.kind === "BIND" && b.state !== "SUCCEEDED");
  expect(binds).toHaveLength(2);
  await reportBindResult(counted, agentOfC1, {
    cluster: "c1",
    results: binds.map((b) => ({ bindRequest: b.id, ok: true })),
  });
}

const eventsOf = async (id: string, kind: string) =>
  ((await eventsOfJobs(t.store, [id], MAX_EVENTS_PAGE)).get(id) ?? []).filter((e) => e.kind === kind);

/** A job's stored estimate with the first start it was given, which no query of the index reads. */
async function estimateRow(id: string) {
  const [row] = await sql<{ estimated: number | null; first: number | null }>(
    t.testDb.url,
    `SELECT (extract(epoch FROM estimated_start) * 1000)::float8 AS estimated,
            (extract(epoch FROM first_estimated_start) * 1000)::float8 AS first
     FROM job_estimate WHERE job_id = $1`,
    [id],
  );
  const at = (ms: number | null) => (ms === null ? null : new Date(ms));
  return row ? { estimatedStart: at(row.estimated), firstEstimatedStart: at(row.first) } : null;
}

async function metricValue(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const metric = await transitionMetrics.getSingleMetric(name)!.get();
  return metric.values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value;
}

it("a job's first start carries its wait, its binds their latency; a second start carries nothing", async () => {
  const { job: j } = await submitJob(counted, admin, job({ name: "waits", queue: QUEUE, cluster: "c1" }));
  await bindAll(j.id);
  const [bindResult] = await eventsOf(j.id, "bind.result");
  const { bindSeconds } = bindResult!.data as unknown as BindResultEventData;
  expect(bindSeconds).toHaveLength(2);
  for (const s of bindSeconds) expect(s).toBeGreaterThanOrEqual(0);
  for (const s of bindSeconds) expect(s).toBeLessThan(60);

  await report(j.id, "RUNNING");
  const row = await jobOf(t, j.id);
  expect(row.state).toBe("RUNNING");
  const [first] = await eventsOf(j.id, "job.running");
  const { waitSeconds } = first!.data as unknown as JobStartEventData;
  expect(waitSeconds).toBeCloseTo((row.startedAt!.getTime() - row.createdAt.getTime()) / 1000, 2);

  // Taken off its nodes, placed again, running again: not a first start.
  await report(j.id, "PENDING");
  await bindAll(j.id);
  await report(j.id, "RUNNING");
  const running = await eventsOf(j.id, "job.running");
  expect(running).toHaveLength(2);
  expect(running[1]!.data).toBeNull();
  await report(j.id, "SUCCEEDED");

  // What the metrics counted as the events were published.
  const labels = { queue: QUEUE, cluster: "c1" };
  expect(await metricValue("fleetq_job_wait_seconds", { ...labels, le: "+Inf" })).toBe(1);
  expect(await metricValue("fleetq_jobs_finished_total", { ...labels, outcome: "succeeded" })).toBe(1);
  expect(
    await metricValue("fleetq_bind_latency_seconds", { cluster: "c1", le: "+Inf" }),
  ).toBeGreaterThanOrEqual(4);
});

it("a job keeps its first estimated start while later runs move it", async () => {
  const { job: j } = await submitJob(
    t.store,
    admin,
    job({
      name: "estimated",
      queue: QUEUE,
      cluster: "c1",
      tasks: [{ name: "w", replicas: 1, resources: { cpu: 1000, memory: "1Gi", gpu: 64 } }],
    }),
  );
  const firstStart = new Date(Date.now() - 120_000);
  await replaceJobEstimates(t.store, "c1", [{ jobId: j.id, cluster: "c1", start: firstStart }]);
  const later = new Date(Date.now() + 600_000);
  await replaceJobEstimates(t.store, "c1", [{ jobId: j.id, cluster: "c1", start: later }]);
  const row = (await estimateRow(j.id))!;
  expect(row.estimatedStart).toEqual(later);
  expect(row.firstEstimatedStart).toEqual(firstStart);

  const past = (await startsPastEstimate(t.store)).find((r) => r.queue === QUEUE);
  expect(past?.jobs).toBe(1);
  expect(past!.seconds).toBeGreaterThanOrEqual(119);
  expect(past!.seconds).toBeLessThan(600);

  // Out of the cluster's estimates (it stopped waiting there), then back: a new first estimate.
  await replaceJobEstimates(t.store, "c1", []);
  await replaceJobEstimates(t.store, "c1", [{ jobId: j.id, cluster: "c1", start: later }]);
  expect((await estimateRow(j.id))!.firstEstimatedStart).toEqual(later);
  expect((await startsPastEstimate(t.store)).find((r) => r.queue === QUEUE)).toBeUndefined();
});

it("a job waiting for admission keeps the first start a cluster offered while the cluster's later offers move it", async () => {
  const { job: j } = await submitJob(
    t.store,
    admin,
    job({
      name: "offered",
      queue: QUEUE,
      tasks: [{ name: "w", replicas: 1, resources: { cpu: 1000, memory: "1Gi", gpu: 64 } }],
    }),
  );
  const firstStart = new Date(Date.now() - 120_000);
  const later = new Date(Date.now() + 600_000);
  const offer = (start: Date) => [{ jobId: j.id, cluster: "c1", start }];
  await replaceJobEstimates(t.store, "c1", [], new Date(), offer(firstStart));
  await replaceJobEstimates(t.store, "c1", [], new Date(), offer(later));
  const row = (await estimateRow(j.id))!;
  expect(row.estimatedStart).toEqual(later);
  expect(row.firstEstimatedStart).toEqual(firstStart);
  // The cluster no longer offers it: its estimate goes.
  await replaceJobEstimates(t.store, "c1", [], new Date(), []);
  expect(await estimateRow(j.id)).toBeNull();
});
